package reconcile_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// What the operator remembers between passes (reconcile/memory) goes with
// the Skyhook: after Skyhooks with a DeploymentPolicy and with a budget
// rolled out and were deleted, and one was created again under its old
// name and deleted too, no store holds anything for any of them, by name
// or by UID (skyhook_operator_memory_entries, read when scraped).
func TestDeletedSkyhooksLeaveNothingInMemory(t *testing.T) {
	c := k8sClient(t)
	createNodes(t, simnode.Numbered("forget", 2, map[string]string{"pool": "forget"})...)
	createPolicyYAML(t, `
metadata: {name: forget}
spec:
  default:
    budget: {count: 1}
    strategy: {fixed: {initialBatch: 1}}
`)
	withPolicy := forgetSkyhook("forget-policy", "forget")
	withBudget := forgetSkyhook("forget-budget", "")
	var uids []types.UID
	for _, sk := range []*skyhookv1.Skyhook{withPolicy, withBudget} {
		uids = append(uids, rollOutAndCheckRemembered(t, c, sk))
	}
	for _, sk := range []*skyhookv1.Skyhook{withPolicy, withBudget} {
		deleteAndWaitGone(t, c, sk.Name)
	}
	// The same name again; a new version, since the deleted Skyhook left
	// the records of its package (no uninstall) on the nodes.
	again := forgetSkyhook("forget-policy", "forget")
	tool := again.Spec.Packages["tool"]
	tool.Version = "2.0.0"
	again.Spec.Packages["tool"] = tool
	uids = append(uids, rollOutAndCheckRemembered(t, c, again))
	for _, uid := range uids[:2] {
		if held := rememberedFor(t, string(uid)); held != "" {
			t.Errorf("a deleted Skyhook's UID %s is still remembered once its name is reused: %s", uid, held)
		}
	}
	deleteAndWaitGone(t, c, again.Name)

	keys := append([]string{"forget-policy", "forget-budget"}, uidStrings(uids)...)
	waitMemory(t, "every store to forget the deleted Skyhooks", keys, func(held string) bool { return held == "" })
}

func forgetSkyhook(name, policy string) *skyhookv1.Skyhook {
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:     metav1.LabelSelector{MatchLabels: map[string]string{"pool": "forget"}},
			DeploymentPolicy: policy,
			Packages: skyhookv1.Packages{"tool": {PackageRef: skyhookv1.PackageRef{Name: "tool", Version: "1.0.0"},
				Image: "ghcr.io/example/tool"}},
		},
	}
	if policy == "" {
		sk.Spec.InterruptionBudget = skyhookv1.InterruptionBudget{Count: new(1)}
	}
	return sk
}

// rollOutAndCheckRemembered creates the Skyhook, waits until it is Ready,
// and checks that the memory metric shows what a rollout leaves in memory
// (so that its emptiness later says something).
func rollOutAndCheckRemembered(t *testing.T, c client.Client, sk *skyhookv1.Skyhook) types.UID {
	t.Helper()
	if err := c.Create(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	done := waitSkyhook(t, sk.Name, 2*time.Minute, isReady)
	want := []string{"names", "records", "statusWrites", "views", "written", "deleted", "stageEnds"}
	if sk.Spec.DeploymentPolicy != "" {
		want = append(want, "batches")
	}
	waitMemory(t, "the memory metric to show "+sk.Name+" in "+strings.Join(want, ", "), []string{sk.Name}, func(held string) bool {
		for _, store := range want {
			if !strings.Contains(held, " "+store+"=") {
				return false
			}
		}
		return true
	})
	return done.UID
}

func deleteAndWaitGone(t *testing.T, c client.Client, name string) {
	t.Helper()
	if err := c.Delete(context.Background(), &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
		t.Fatal(err)
	}
	eventually(t, name+" to be gone", func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKey{Name: name}, &skyhookv1.Skyhook{}))
	})
}

// waitMemory waits until what the memory metric shows for the Skyhooks
// (by name or UID) satisfies ok.
func waitMemory(t *testing.T, what string, skyhooks []string, ok func(held string) bool) {
	t.Helper()
	var held string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		held = ""
		for _, key := range skyhooks {
			held += rememberedFor(t, key)
		}
		return ok(held), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v; the memory metric shows:%s", what, err, held)
	}
}

// rememberedFor lists the stores of the memory metric that hold a place
// for the rollout (by name, of any kind, or by UID), as " store=entries"
// each.
func rememberedFor(t *testing.T, skyhook string) string {
	t.Helper()
	var out string
	for _, m := range testenv.Series(t, "skyhook_operator_memory_entries", map[string]string{"name": skyhook}) {
		for _, l := range m.GetLabel() {
			if l.GetName() == "store" {
				out += fmt.Sprintf(" %s=%g", l.GetValue(), m.GetGauge().GetValue())
			}
		}
	}
	if out != "" {
		out = skyhook + ":" + out + ";"
	}
	return out
}

func uidStrings(uids []types.UID) []string {
	out := make([]string, len(uids))
	for i, u := range uids {
		out[i] = string(u)
	}
	return out
}
