package webhook_test

import (
	"context"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func nodeWright(spec string) string {
	return "apiVersion: nodewright.nvidia.com/v1alpha1\nkind: NodeWright\nmetadata:\n  name: case\nspec:\n" + spec
}

func nodeWrightPolicy(spec string) string {
	return "apiVersion: nodewright.nvidia.com/v1alpha1\nkind: DeploymentPolicy\nmetadata:\n  name: case\nspec:\n" + spec
}

// nwPkg is a NodeWright with one package "tuning" with the given fields.
func nwPkg(fields string) string {
	return nodeWright("  packages:\n    tuning:\n" + indent(fields, "      "))
}

const (
	nwHook   = `admission webhook "validate-nodewright.nvidia.com" denied the request`
	nwDPHook = `admission webhook "validate-deploymentpolicy-nodewright.nvidia.com" denied the request`
	digest   = "1111111111111111111111111111111111111111111111111111111111111111"
)

// NodeWright v0.20's rules for its group: a package image is a bare
// repository (a tag or digest in it is refused, naming containerSHA; a
// registry's port is no tag), containerSHA carries sha256:, the pod
// selector must parse; and everything a Skyhook is checked for, every
// problem by field path in one answer.
var nodeWrightCases = []admissionCase{
	{"bare image", nwPkg(okPkg), nil},
	{"registry with a port", nwPkg("version: 1.0.0\nimage: localhost:5000/org/tuning"), nil},
	{"pinned by containerSHA", nwPkg("version: 1.0.0\nimage: ghcr.io/nvidia/tuning\ncontainerSHA: sha256:" + digest), nil},
	{"inline tag equal to the version", nwPkg("version: 1.0.0\nimage: ghcr.io/nvidia/tuning:1.0.0"),
		[]string{nwHook, "spec.packages.tuning.image", "must not hold a tag", "containerSHA"}},
	{"inline digest", nwPkg("version: 1.0.0\nimage: ghcr.io/nvidia/tuning@sha256:" + digest),
		[]string{nwHook, "spec.packages.tuning.image", "must not hold a digest", "containerSHA"}},
	{"empty tag", nwPkg("version: 1.0.0\nimage: \"ghcr.io/nvidia/tuning:\""), []string{"spec.packages.tuning.image", "must not hold a tag"}},
	{"containerSHA without sha256:", nwPkg("version: 1.0.0\nimage: ghcr.io/nvidia/tuning\ncontainerSHA: \"" + digest + "\""),
		[]string{"packages[*].containerSHA must be sha256: and 64 lowercase hex digits"}},
	{"podNonInterruptLabels that do not parse", nodeWright("  podNonInterruptLabels: {matchExpressions: [{key: app, operator: Near}]}\n"),
		[]string{nwHook, "spec.podNonInterruptLabels.matchExpressions[0].operator"}},
	{"two problems at once", nwPkg("version: latest\nimage: ghcr.io/nvidia/tuning:1"),
		[]string{nwHook, "spec.packages.tuning.version", "must be a semantic version", "spec.packages.tuning.image", "must not hold a tag"}},
	{"a policy of NodeWright's group that does not exist", nodeWright("  deploymentPolicy: missing\n"),
		[]string{nwHook, "spec.deploymentPolicy", `deploymentPolicy "missing" not found`}},
	{"a policy of NodeWright's group", nodeWright("  deploymentPolicy: nw-policy\n"), nil},
	{"a policy of the seeds' group is not one of NodeWright's", nodeWright("  deploymentPolicy: case-policy\n"),
		[]string{nwHook, `deploymentPolicy "case-policy" not found`}},
	{"NodeWright policy with two strategies", nodeWrightPolicy("  default: {budget: {count: 1}, strategy: {fixed: {}, exponential: {}}}\n"),
		[]string{"spec.default.strategy", "set exactly one of fixed, linear and exponential"}},
	{"NodeWright policy compartment selecting everything", nodeWrightPolicy("  default: {budget: {count: 1}}\n  compartments:\n  - {name: all, selector: {}, budget: {count: 1}}\n"),
		[]string{nwDPHook, "spec.compartments[0].selector", "an empty selector selects every node"}},
	// v0.18-v0.20's fields: durations must not be negative; "0" is no bound.
	{"NodeWright v0.20's drain config", nodeWright("  drainConfig: {disableEviction: true, deleteEmptyDirData: false, force: false, ignoreDaemonSets: true, timeout: 5m, gracePeriod: 30s}\n  runtimeRequired: true\n  runtimeRequiredCordonAfter: true\n"), nil},
	{"stage timeout of 0 (no bound)", nwPkg(okPkg + "stageTimeout: 0s"), nil},
	{"negative stage timeout", nwPkg(okPkg + "stageTimeout: -1m"), []string{nwHook, "spec.packages.tuning.stageTimeout", "must not be negative"}},
	{"negative drain timeout and grace period", nodeWright("  drainConfig: {timeout: -5s, gracePeriod: -1s}\n"),
		[]string{nwHook, "spec.drainConfig.timeout", "spec.drainConfig.gracePeriod", "must not be negative"}},
	{"two drain timeouts", nodeWright("  drain: {timeout: 5m}\n  drainConfig: {timeout: 10m}\n"),
		[]string{nwHook, "spec.drainConfig.timeout", "spec.drain.timeout is set too"}},
	// The seeds' group keeps its rules: a tag equal to the version passes.
	{"Skyhook with a tag equal to the version", pkg("version: 1.0.0\nimage: ghcr.io/nvidia/tuning:1.0.0"), nil},
}

func TestNodeWrightAdmissionTable(t *testing.T) {
	c := k8sClient(t)
	ensure(t, c, policyManifest("  default: {budget: {count: 1}}\n"), "case-policy")
	ensure(t, c, nodeWrightPolicy("  default: {budget: {count: 1}}\n"), "nw-policy")
	for _, tc := range nodeWrightCases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Create(context.Background(), decode(t, tc.manifest), client.DryRunAll)
			requireOutcome(t, err, tc.want)
		})
	}
}

// The mutating webhook names a NodeWright's packages after their keys, and
// leaves its images as written (there is nothing to split out: a tag or
// digest is refused); a DeploymentPolicy of NodeWright's group gets the
// seeds' defaults.
func TestNodeWrightMutationStoresDefaults(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	obj := decode(t, strings.Replace(nwPkg(okPkg), "name: case", "name: nw-mutated", 1))
	if err := c.Create(ctx, obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, obj) })
	var got nodewrightv1.NodeWright
	if err := c.Get(ctx, client.ObjectKeyFromObject(obj), &got); err != nil {
		t.Fatal(err)
	}
	if p := got.Spec.Packages["tuning"]; p.Name != "tuning" || p.Image != "ghcr.io/nvidia/tuning" {
		t.Errorf("stored as %+v", p)
	}
	dp := ensure(t, c, nodeWrightPolicy("  default: {budget: {count: 1}, strategy: {linear: {}}}\n"), "nw-defaulted")
	var policy nodewrightv1.DeploymentPolicy
	if err := c.Get(ctx, client.ObjectKeyFromObject(dp), &policy); err != nil {
		t.Fatal(err)
	}
	if l := policy.Spec.Default.Strategy.Linear; l == nil || l.Delta == nil || *l.Delta != 1 || policy.Spec.ResetBatchStateOnCompletion == nil {
		t.Errorf("policy stored as %+v", policy.Spec)
	}
}

// A DeploymentPolicy of NodeWright's group that NodeWrights use cannot be
// deleted; the refusal names them, as the seeds' refusal names Skyhooks.
func TestNodeWrightPolicyInUseCannotBeDeleted(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	dp := ensure(t, c, nodeWrightPolicy("  default: {budget: {count: 1}}\n"), "nw-in-use")
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "nw-user"}, Spec: skyhookv1.SkyhookSpec{DeploymentPolicy: "nw-in-use"}}
	if err := c.Create(ctx, nw); err != nil {
		t.Fatal(err)
	}
	requireOutcome(t, c.Delete(ctx, dp), []string{`deploymentpolicies.nodewright.nvidia.com "nw-in-use" is forbidden`, `cannot delete DeploymentPolicy "nw-in-use": still referenced by 1 NodeWright(s): [nw-user]`})
	if err := c.Delete(ctx, nw); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		return c.Delete(ctx, dp) == nil, nil
	})
	if err != nil {
		t.Fatal("the policy could not be deleted after its NodeWright was")
	}
}
