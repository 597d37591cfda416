package v1alpha1_test

import (
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

func TestPackageSetSchemaRejectsInvalidSpecs(t *testing.T) {
	cases := []rejection{
		{
			name: "unsupported source kind",
			spec: `
  sourceRef: {kind: Bucket, name: fleet}
  interval: 5m
`,
			field: "spec.sourceRef.kind",
			rule:  `Unsupported value: "Bucket"`,
		},
		{
			name: "missing interval",
			spec: `
  sourceRef: {kind: GitRepository, name: fleet}
`,
			field: "spec.interval",
			rule:  "Required value",
		},
		{
			name: "interval that is no duration",
			spec: `
  sourceRef: {kind: GitRepository, name: fleet}
  interval: often
`,
			field: "spec.interval",
			rule:  "should match",
		},
		{
			// The pattern allows it, Go's time.Duration cannot hold it:
			// stored, it would fail the operator's decoding of every
			// PackageSet list.
			name: "interval longer than a Go duration",
			spec: `
  sourceRef: {kind: GitRepository, name: fleet}
  interval: 9999999999h
`,
			field: "spec.interval",
			rule:  "must be at most 2562047h",
		},
		{
			name: "interval of zero",
			spec: `
  sourceRef: {kind: GitRepository, name: fleet}
  interval: 0s
`,
			field: "spec.interval",
			rule:  "must be more than 0s",
		},
		{
			name: "path escaping the artifact",
			spec: `
  sourceRef: {kind: OCIRepository, name: fleet}
  interval: 5m
  path: ../../etc
`,
			field: "spec.path",
			rule:  "path must not contain '..'",
		},
		{
			name: "service account name that is no name",
			spec: `
  sourceRef: {kind: GitRepository, name: fleet}
  interval: 5m
  serviceAccountName: "Fleet Deployer"
`,
			field: "spec.serviceAccountName",
			rule:  "should match",
		},
	}
	requireRejections(t, cases, packageSetYAML)
}

func isAlreadyExists(err error) bool { return apierrors.IsAlreadyExists(err) }
