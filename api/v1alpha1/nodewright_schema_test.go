package v1alpha1_test

import (
	"context"
	"strings"
	"testing"

	"github.com/fluxcd/pkg/runtime/conditions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// The Flux condition helpers work on NodeWright's kinds too.
var (
	_ conditions.Setter = &nodewrightv1.NodeWright{}
	_ conditions.Setter = &nodewrightv1.DeploymentPolicy{}
)

// NodeWright's kinds are served as NodeWright v0.20 serves them: cluster
// scoped, with a status subresource, no short names or categories.
func TestNodeWrightKindsAreServedAsNodeWrightServesThem(t *testing.T) {
	crds, err := apiextensionsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	for plural, kind := range map[string]string{"nodewrights": "NodeWright", "deploymentpolicies": "DeploymentPolicy"} {
		crd, err := crds.ApiextensionsV1().CustomResourceDefinitions().Get(context.Background(), plural+".nodewright.nvidia.com", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		names := crd.Spec.Names
		if names.Kind != kind || crd.Spec.Scope != apiextensionsv1.ClusterScoped || len(names.ShortNames) > 0 || len(names.Categories) > 0 {
			t.Errorf("%s: kind %s, scope %s, short names %v, categories %v", plural, names.Kind, crd.Spec.Scope, names.ShortNames, names.Categories)
		}
		if v := crd.Spec.Versions; len(v) != 1 || v[0].Name != "v1alpha1" || v[0].Subresources == nil || v[0].Subresources.Status == nil {
			t.Errorf("%s: versions %+v, want v1alpha1 with a status subresource", plural, v)
		}
	}
}

// kubectl prints NodeWrights with the columns NodeWright prints, in its
// order.
func TestNodeWrightPrinterColumnsInKubectl(t *testing.T) {
	c := k8sClient(t)
	var nw nodewrightv1.NodeWright
	createAndGet(t, c, nodeWrightYAML("printed", `
  deploymentPolicy: gpu
  packages:
    tuning:
      version: 1.1.0
      image: ghcr.io/x/tuning
`), &nw)
	nw.Status.Status = skyhookv1.StatusInProgress
	nw.Status.CompleteNodes, nw.Status.NodesInProgress, nw.Status.PackageList = "1/3", 2, "tuning:1.1.0"
	if err := c.Status().Update(context.Background(), &nw); err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{"nodewright", "nodewrights", "nodewrights.nodewright.nvidia.com"} {
		wantRow(t, kubectl(t, "get", kind, "printed"),
			[]string{"NAME", "STATUS", "PRIORITY", "AGE", "NODES IN-PROGRESS", "COMPLETE NODES", "PACKAGES", "POLICY"},
			[]string{"printed", "in_progress", "200"})
	}
	table := kubectl(t, "get", "nodewright", "printed", "--no-headers")
	for _, cell := range []string{"   2   ", "1/3", "tuning:1.1.0", "gpu"} {
		if !strings.Contains(table, cell) {
			t.Errorf("the row lacks %q:\n%s", cell, table)
		}
	}
}

// The schema of a NodeWright is a Skyhook's, plus NodeWright v0.20's rule
// that a containerSHA carries its sha256: prefix; the seeds' Skyhook keeps
// accepting a bare digest.
func TestNodeWrightSchemaRejectsInvalidSpecs(t *testing.T) {
	digest := strings.Repeat("a", 64)
	requireRejections(t, []rejection{
		{
			name: "containerSHA without its prefix",
			spec: `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      containerSHA: ` + digest + `
`,
			field: "spec",
			rule:  "packages[*].containerSHA must be sha256: and 64 lowercase hex digits",
		},
		{
			name: "containerSHA in upper case",
			spec: `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      containerSHA: sha256:` + strings.ToUpper(digest) + `
`,
			field: "spec.packages.tuning.containerSHA",
			rule:  "should match",
		},
		{
			name: "unknown interrupt type, as for a Skyhook",
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
	}, nodeWrightYAML)

	c := k8sClient(t)
	for name, manifest := range map[string]string{
		"nodewright-sha": nodeWrightYAML("pinned", "  packages:\n    tuning:\n      version: 1.0.0\n      image: ghcr.io/x/tuning\n      containerSHA: sha256:"+digest+"\n"),
		"skyhook-sha":    skyhookYAML("pinned", "  packages:\n    tuning:\n      version: 1.0.0\n      image: ghcr.io/x/tuning\n      containerSHA: "+digest+"\n"),
	} {
		obj := fromYAML(t, manifest)
		if err := c.Create(context.Background(), obj); err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		cleanup(t, c, obj)
	}
}

// A NodeWright's name is part of node keys under nodewright.nvidia.com/, so
// it is bounded as a Skyhook's is.
func TestNodeWrightNameLengthLeavesRoomForNodeKeys(t *testing.T) {
	c := k8sClient(t)
	tooLong := fromYAML(t, nodeWrightYAML(strings.Repeat("n", 54), "  {}\n"))
	err := c.Create(context.Background(), tooLong)
	if err == nil {
		cleanup(t, c, tooLong)
	}
	requireRejected(t, err, "<nil>", "nodewright.nvidia.com/nodeState_<name>")
}

// A DeploymentPolicy of NodeWright's group has the same schema and defaults
// as one of the seeds' group.
func TestNodeWrightDeploymentPolicyIsTheSeedsOne(t *testing.T) {
	c := k8sClient(t)
	var policy nodewrightv1.DeploymentPolicy
	createAndGet(t, c, nodeWrightPolicyYAML("gpu", `
  default:
    budget: {percent: 25}
    strategy: {fixed: {}}
`), &policy)
	if s := policy.Spec.Default.Strategy.Fixed; s == nil || s.InitialBatch == nil || *s.InitialBatch != 1 {
		t.Errorf("fixed strategy stored as %+v, want the default initialBatch 1", s)
	}
	requireRejections(t, []rejection{{
		name:  "no budget",
		spec:  "  default:\n    strategy: {fixed: {}}\n",
		field: "spec.default.budget",
		rule:  "Required value",
	}}, nodeWrightPolicyYAML)
}
