package nodestate

import (
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// demo is the Skyhook the tests record.
var demo = skyhookv1.Skyhooks.Named("demo")

func TestPatchWritesOnlyChanges(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	state := skyhookv1.NodeState{
		skyhookv1.NodeStateKey("tuning", "1.0.0"): {Name: "tuning", Version: "1.0.0", Image: "ghcr.io/x/tuning", Stage: skyhookv1.StageApply, State: skyhookv1.StateInProgress},
	}
	rec := Record{State: state, Config: map[string]string{"tuning": "abc"}, Status: skyhookv1.StatusInProgress, Batch: 3}
	patch, err := Patch(node, demo, rec)
	if err != nil || patch == nil {
		t.Fatalf("patch %s, %v; want a patch", patch, err)
	}
	var p struct {
		Metadata struct{ Labels, Annotations map[string]string }
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		t.Fatal(err)
	}
	node.Labels, node.Annotations = p.Metadata.Labels, p.Metadata.Annotations
	if node.Labels["skyhook.nvidia.com/status_demo"] != "in_progress" {
		t.Errorf("labels %v", node.Labels)
	}
	const want = `{"tuning|1.0.0":{"name":"tuning","version":"1.0.0","image":"ghcr.io/x/tuning","stage":"apply","state":"in_progress"}}`
	if got := node.Annotations["skyhook.nvidia.com/nodeState_demo"]; got != want {
		t.Errorf("annotation\n got %s\nwant %s", got, want)
	}
	read, err := Read(node, demo)
	if err != nil || len(read) != 1 || read["tuning|1.0.0"].Stage != skyhookv1.StageApply {
		t.Fatalf("read back %v, %v", read, err)
	}
	if ReadBatch(node, demo) != 3 {
		t.Errorf("batch %q, want 3", node.Annotations["skyhook.nvidia.com/batch_demo"])
	}
	if again, _ := Patch(node, demo, rec); again != nil {
		t.Errorf("patched again with nothing changed: %s", again)
	}
	forget, _ := Forget(node, demo)
	if ReadConfig(node, demo)["tuning"] != "abc" {
		t.Errorf("config hashes %v", ReadConfig(node, demo))
	}
	if string(forget) != `{"metadata":{"annotations":{"skyhook.nvidia.com/batch_demo":null,"skyhook.nvidia.com/bootID_demo":null,"skyhook.nvidia.com/config_demo":null,"skyhook.nvidia.com/drainBlocked_demo":null,"skyhook.nvidia.com/drainStart_demo":null,"skyhook.nvidia.com/interrupt_demo":null,"skyhook.nvidia.com/nodeState_demo":null,"skyhook.nvidia.com/status_demo":null,"skyhook.nvidia.com/version_demo":null},"labels":{"skyhook.nvidia.com/status_demo":null}}}` {
		t.Errorf("forget patch %s", forget)
	}
	if none, _ := Forget(&corev1.Node{}, demo); none != nil {
		t.Errorf("forgot what was not there: %s", none)
	}
}

func TestReadRejectsGarbage(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{"skyhook.nvidia.com/nodeState_demo": "{"}}}
	if _, err := Read(node, demo); err == nil {
		t.Fatal("accepted a broken annotation")
	}
}

// The operator's version goes to version_<skyhook>, as NodeWright writes
// it; a new version is a change, the same one is not.
func TestPatchWritesTheOperatorVersion(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	rec := Record{State: skyhookv1.NodeState{}, Status: skyhookv1.StatusComplete, Version: "v1.2.0"}
	patch, err := Patch(node, demo, rec)
	if err != nil || !strings.Contains(string(patch), `"skyhook.nvidia.com/version_demo":"v1.2.0"`) {
		t.Fatalf("patch %s, %v", patch, err)
	}
	node.Annotations = map[string]string{"skyhook.nvidia.com/version_demo": "v1.2.0", "skyhook.nvidia.com/status_demo": "complete", "skyhook.nvidia.com/nodeState_demo": "{}"}
	node.Labels = map[string]string{"skyhook.nvidia.com/status_demo": "complete"}
	if again, _ := Patch(node, demo, rec); again != nil {
		t.Errorf("patched again with the same version: %s", again)
	}
	rec.Version = "v1.3.0"
	if upgraded, _ := Patch(node, demo, rec); !strings.Contains(string(upgraded), `"v1.3.0"`) {
		t.Errorf("a new operator version is not written: %s", upgraded)
	}
}

// A status mark sets the label and the annotation, nothing else, and is
// nil once both say it.
func TestStatusPatch(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{"skyhook.nvidia.com/status_demo": "complete"}}}
	patch := StatusPatch(node, demo, skyhookv1.StatusDisabled)
	if string(patch) != `{"metadata":{"annotations":{"skyhook.nvidia.com/status_demo":"disabled"},"labels":{"skyhook.nvidia.com/status_demo":"disabled"}}}` {
		t.Errorf("patch %s", patch)
	}
	node.Labels["skyhook.nvidia.com/status_demo"] = "disabled"
	node.Annotations = map[string]string{"skyhook.nvidia.com/status_demo": "disabled"}
	if again := StatusPatch(node, demo, skyhookv1.StatusDisabled); again != nil {
		t.Errorf("patched again: %s", again)
	}
}

// Config and batch annotations that are not what this operator writes
// there are problems (read as none), and the next Patch rewrites them.
func TestProblemsAreRewritten(t *testing.T) {
	for _, tc := range []struct{ config, batch string }{
		{`{"tuning":7}`, "x"}, {"null", "0"}, {"{}", "-3"}, {`{"tuning":"abc"`, " 2"}, {`{ "tuning" : "abc" }`, "02"},
	} {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{
			"skyhook.nvidia.com/config_demo": tc.config, "skyhook.nvidia.com/batch_demo": tc.batch,
			"skyhook.nvidia.com/nodeState_demo": "{}", "skyhook.nvidia.com/status_demo": "complete"},
			Labels: map[string]string{"skyhook.nvidia.com/status_demo": "complete"}}}
		problems := Problems(node, demo)
		if len(problems) != 2 || !strings.Contains(problems[0], "config_demo holds") || !strings.Contains(problems[1], "batch_demo holds") {
			t.Errorf("%q/%q: problems %q", tc.config, tc.batch, problems)
		}
		rec := Record{State: skyhookv1.NodeState{}, Config: ReadConfig(node, demo), Status: skyhookv1.StatusComplete, Batch: ReadBatch(node, demo)}
		if patch, _ := Patch(node, demo, rec); patch == nil {
			t.Errorf("%q/%q: not rewritten", tc.config, tc.batch)
		}
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Annotations: map[string]string{"skyhook.nvidia.com/config_demo": `{"a":"1","b":"2"}`, "skyhook.nvidia.com/batch_demo": "12"}}}
	if problems := Problems(node, demo); len(problems) > 0 {
		t.Errorf("the operator's own values: %q", problems)
	}
}

// A record write acknowledges the boot ID it is given, and only an empty
// one leaves the annotation as it is.
func TestPatchAcknowledgesTheBoot(t *testing.T) {
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n"}}
	rec := Record{State: skyhookv1.NodeState{}, Status: skyhookv1.StatusComplete, BootID: "boot-1"}
	patch, err := Patch(node, demo, rec)
	if err != nil {
		t.Fatal(err)
	}
	node = applyMergePatch(t, node, patch)
	if node.Annotations[demo.BootIDAnnotation()] != "boot-1" {
		t.Fatalf("boot not acknowledged: %s", patch)
	}
	if again, _ := Patch(node, demo, rec); again != nil {
		t.Errorf("patched again with the same boot: %s", again)
	}
	if kept, _ := Patch(node, demo, Record{State: skyhookv1.NodeState{}, Status: skyhookv1.StatusComplete}); kept != nil {
		t.Errorf("a record without a boot ID rewrote the node: %s", kept)
	}
	rec.BootID = "boot-2"
	if next, _ := Patch(node, demo, rec); !strings.Contains(string(next), `"skyhook.nvidia.com/bootID_demo":"boot-2"`) {
		t.Errorf("a new boot is not acknowledged: %s", next)
	}
	if AcknowledgeBoot(node, demo, "boot-1") != nil || AcknowledgeBoot(node, demo, "boot-2") == nil {
		t.Error("AcknowledgeBoot writes only a boot ID the node does not say")
	}
}

// The reset after a reboot takes the entries, status and config hashes
// off, acknowledges the boot, and keeps the batch, the version and the
// cordon.
func TestRebootReset(t *testing.T) {
	kept := map[string]string{demo.BatchAnnotation(): "2", demo.VersionAnnotation(): "v1", demo.CordonAnnotation(): "true"}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Labels: map[string]string{demo.StatusKey(): "complete"}, Annotations: map[string]string{
		demo.NodeStateAnnotation(): `{"tuning|1.0.0":{"name":"tuning","version":"1.0.0","stage":"config","state":"complete"}}`,
		demo.StatusKey():           "complete", demo.ConfigAnnotation(): `{"tuning":"abc"}`, demo.BootIDAnnotation(): "old"}}}
	for k, v := range kept {
		node.Annotations[k] = v
	}
	after := applyMergePatch(t, node, RebootReset(demo, "new"))
	for _, gone := range []string{demo.NodeStateAnnotation(), demo.StatusKey(), demo.ConfigAnnotation()} {
		if _, ok := after.Annotations[gone]; ok {
			t.Errorf("%s kept after the reset", gone)
		}
	}
	if _, ok := after.Labels[demo.StatusKey()]; ok {
		t.Error("status label kept after the reset")
	}
	for k, v := range kept {
		if after.Annotations[k] != v {
			t.Errorf("%s = %q after the reset, want %q", k, after.Annotations[k], v)
		}
	}
	if after.Annotations[demo.BootIDAnnotation()] != "new" {
		t.Errorf("boot acknowledged %q, want new", after.Annotations[demo.BootIDAnnotation()])
	}
}
