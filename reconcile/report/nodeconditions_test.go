package report

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestNodeConditionsArePatchedOnlyWhenTheySaySomethingNew(t *testing.T) {
	state := skyhookv1.NodeState{"a|1": {Name: "a", Version: "1", State: skyhookv1.StateErroring}}
	want := NodeConditions(skyhookv1.Skyhooks.Named("sk"), skyhookv1.StatusErroring, state)
	if len(want) != 2 || want[0].Type != "skyhook.nvidia.com/sk/NotReady" || want[0].Status != corev1.ConditionTrue ||
		want[1].Type != "skyhook.nvidia.com/sk/Erroring" || want[1].Status != corev1.ConditionTrue || want[1].Reason != "Package(s) Erroring or Unknown" {
		t.Fatalf("conditions of an erroring node: %+v", want)
	}
	node := &corev1.Node{}
	patch, err := ConditionsPatch(node, want)
	if err != nil || patch == nil {
		t.Fatalf("no patch for a node without the conditions: %s %v", patch, err)
	}
	var decoded struct {
		Status corev1.NodeStatus `json:"status"`
	}
	if err := json.Unmarshal(patch, &decoded); err != nil {
		t.Fatal(err)
	}
	node.Status.Conditions = decoded.Status.Conditions
	if again, _ := ConditionsPatch(node, NodeConditions(skyhookv1.Skyhooks.Named("sk"), skyhookv1.StatusErroring, state)); again != nil {
		t.Fatalf("the same conditions patched again: %s", again)
	}
	complete := NodeConditions(skyhookv1.Skyhooks.Named("sk"), skyhookv1.StatusComplete, skyhookv1.NodeState{"a|1": {Name: "a", Version: "1", State: skyhookv1.StateComplete}})
	if p, _ := ConditionsPatch(node, complete); !strings.Contains(string(p), `"reason":"Complete"`) || !strings.Contains(string(p), `"reason":"Not Erroring"`) {
		t.Fatalf("complete: %s", p)
	}
	if ConditionSummary(complete) == ConditionSummary(want) {
		t.Fatal("the summaries of different conditions are the same")
	}
	forget, err := ForgetConditionsPatch(node, skyhookv1.Skyhooks.Named("sk"))
	if err != nil || strings.Count(string(forget), `"$patch":"delete"`) != 2 {
		t.Fatalf("forget: %s %v", forget, err)
	}
	if none, _ := ForgetConditionsPatch(node, skyhookv1.Skyhooks.Named("other")); none != nil {
		t.Fatalf("forget of a Skyhook with no conditions: %s", none)
	}
}

func TestCountUninstallsCountsDeclaredVersionsOnly(t *testing.T) {
	sk := testSkyhook() // a 1.0.0, b 2.0.0
	state := skyhookv1.NodeState{
		"a|1.0.0": {Name: "a", Version: "1.0.0", Stage: skyhookv1.StageUninstall, State: skyhookv1.StateInProgress},
		"b|1.0.0": {Name: "b", Version: "1.0.0", Stage: skyhookv1.StageUninstall, State: skyhookv1.StateErroring}, // an older version
	}
	if uninstalling, failing := CountUninstalls(sk, state); !uninstalling || failing {
		t.Fatalf("uninstalling %v failing %v, want true and false", uninstalling, failing)
	}
	state["b|2.0.0"] = skyhookv1.PackageStatus{Name: "b", Version: "2.0.0", Stage: skyhookv1.StageUninstallInterrupt, State: skyhookv1.StateErroring}
	if _, failing := CountUninstalls(sk, state); !failing {
		t.Fatal("a failing uninstall interrupt is not counted")
	}
}

// A NodeWright's node conditions are under its prefix and name its kind.
func TestNodeWrightsNodeConditions(t *testing.T) {
	got := NodeConditions(skyhookv1.NodeWrights.Named("gpu"), skyhookv1.StatusInProgress, nil)
	if got[0].Type != "nodewright.nvidia.com/gpu/NotReady" || got[0].Message != "NodeWright gpu Ready" || got[1].Type != "nodewright.nvidia.com/gpu/Erroring" {
		t.Fatalf("%+v", got)
	}
}
