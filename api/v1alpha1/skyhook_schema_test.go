package v1alpha1_test

import (
	"context"
	"strings"
	"testing"
)

// The CRD schema rejects what it can check by itself, naming the field and
// the rule; the admission webhooks add the checks a schema cannot make.
func TestSkyhookSchemaRejectsInvalidSpecs(t *testing.T) {
	cases := []rejection{
		{
			name: "unknown interrupt type",
			spec: `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      interrupt:
        type: explode
`,
			field: "spec.packages.tuning.interrupt.type",
			rule:  `Unsupported value: "explode"`,
		},
		{
			name: "missing version",
			spec: `
  packages:
    tuning:
      image: ghcr.io/x/tuning
`,
			field: "spec.packages.tuning.version",
			rule:  "Required value",
		},
		{
			name: "missing image",
			spec: `
  packages:
    tuning:
      version: 1.0.0
`,
			field: "spec.packages.tuning.image",
			rule:  "Required value",
		},
		{
			name: "bad package name",
			spec: `
  packages:
    Bad_Name:
      version: 1.0.0
      image: ghcr.io/x/tuning
`,
			field: "spec.packages",
			rule:  "package names must match ^[a-z][-a-z0-9]{0,41}[a-z]$",
		},
		{
			name: "package name field breaks the pattern",
			spec: `
  packages:
    tuning:
      name: Tuning
      version: 1.0.0
      image: ghcr.io/x/tuning
`,
			field: "spec.packages.tuning.name",
			rule:  "should match",
		},
		{
			name: "priority 0",
			spec: `
  priority: 0
`,
			field: "spec.priority",
			rule:  "should be greater than or equal to 1",
		},
		{
			name: "percent 150",
			spec: `
  interruptionBudget:
    percent: 150
`,
			field: "spec.interruptionBudget.percent",
			rule:  "should be less than or equal to 100",
		},
		{
			name: "negative count",
			spec: `
  interruptionBudget:
    count: -1
`,
			field: "spec.interruptionBudget.count",
			rule:  "should be greater than or equal to 0",
		},
		{
			name: "percent and count",
			spec: `
  interruptionBudget:
    percent: 10
    count: 2
`,
			field: "spec.interruptionBudget",
			rule:  "percent and count are mutually exclusive",
		},
		{
			name: "deploymentPolicy with interruptionBudget",
			spec: `
  deploymentPolicy: gpu-rollout
  interruptionBudget:
    count: 2
`,
			field: "spec",
			rule:  "deploymentPolicy and interruptionBudget are mutually exclusive",
		},
		{
			name: "service interrupt without services",
			spec: `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      interrupt:
        type: service
`,
			field: "spec.packages[tuning].interrupt", // CEL errors use brackets for map keys
			rule:  "a service interrupt needs at least one service",
		},
		{
			name: "some resources but not all four",
			spec: `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      resources:
        cpuRequest: 100m
        memoryLimit: 1Gi
`,
			field: "spec.packages[tuning].resources",
			rule:  "set all four of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none",
		},
		{
			name: "container digest that is not one",
			spec: `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      containerSHA: latest
`,
			field: "spec.packages.tuning.containerSHA",
			rule:  "should match",
		},
	}
	requireRejections(t, cases, skyhookYAML)
}

// A Skyhook's name is part of node label and annotation keys
// (skyhook.nvidia.com/nodeState_<name>), whose name part has 63 characters
// at most; the schema keeps names within that.
func TestSkyhookNameLengthLeavesRoomForNodeKeys(t *testing.T) {
	c := k8sClient(t)
	longest := strings.Repeat("n", 53)
	ok := fromYAML(t, skyhookYAML(longest, "  {}\n"))
	if err := c.Create(context.Background(), ok); err != nil {
		t.Fatalf("a %d-character name was rejected: %v", len(longest), err)
	}
	cleanup(t, c, ok)

	tooLong := fromYAML(t, skyhookYAML(longest+"n", "  {}\n"))
	err := c.Create(context.Background(), tooLong)
	if err == nil {
		cleanup(t, c, tooLong)
	}
	requireRejected(t, err, "<nil>", "metadata.name may have at most 53 characters")
}
