package reconcile

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func TestStatusWritesHoldOnlyCounterChangesWithinTheInterval(t *testing.T) {
	var writes statusWrites
	before := testPass().sk
	before.UID = "uid"
	moved := before.DeepCopy()
	moved.Status.CompleteNodes, moved.Status.NodesInProgress = "5/10", 3
	if _, hold := writes.hold(before, moved); hold {
		t.Fatal("held a write with no earlier write")
	}
	writes.wrote(before.UID)
	wait, hold := writes.hold(before, moved)
	if !hold || wait <= 0 || wait > statusInterval {
		t.Fatalf("counters moved right after a write: hold %v wait %s, want held up to %s", hold, wait, statusInterval)
	}
	ready := moved.DeepCopy()
	conditions.MarkTrue(ready, meta.ReadyCondition, meta.SucceededReason, "done")
	if _, hold := writes.hold(before, ready); hold {
		t.Fatal("held a transition (Ready)")
	}
	finalizer := moved.DeepCopy()
	finalizer.Finalizers = []string{Finalizer}
	if _, hold := writes.hold(before, finalizer); hold {
		t.Fatal("held a finalizer change")
	}
}

func TestStartedNodesAndWrittenRecordsArePerSkyhook(t *testing.T) {
	var started startedNodes
	started.add("a", "node-1")
	if !started.has("a", "node-1") || started.has("b", "node-1") {
		t.Fatal("started: not per Skyhook")
	}
	started.remove("a", "node-1")
	started.add("a", "node-2")
	started.forget("a")
	if started.has("a", "node-1") || started.has("a", "node-2") {
		t.Fatal("started: remove or forget kept a node")
	}
	var written writtenRecords
	written.record("a", "node-uid", []byte(`{"x":1}`))
	if !written.same("a", "node-uid", []byte(`{"x":1}`)) || written.same("a", "node-uid", []byte(`{"x":2}`)) || written.same("b", "node-uid", []byte(`{"x":1}`)) {
		t.Fatal("written: same answers wrong")
	}
	written.forget("a")
	if written.same("a", "node-uid", []byte(`{"x":1}`)) {
		t.Fatal("written: forget kept the record")
	}
}

func TestRecentWritesAreForgottenAfterTheWindow(t *testing.T) {
	var deletes recentWrites
	deletes.add("pod-1")
	if !deletes.has("pod-1") || deletes.has("pod-2") {
		t.Fatal("recent delete not remembered")
	}
	deletes.at["pod-1"] = time.Now().Add(-recentWriteWindow) // as if deleted a window ago
	if deletes.has("pod-1") {
		t.Fatal("a delete older than the window is still remembered")
	}
	deletes.lastPrune = time.Time{}
	deletes.add("pod-2") // prunes
	if _, kept := deletes.at["pod-1"]; kept || len(deletes.at) != 1 {
		t.Fatalf("prune kept %v", deletes.at)
	}
	if left := deletes.left("pod-2"); left <= 0 || left > recentWriteWindow {
		t.Fatalf("pod-2 remembered for %s more", left)
	}
	deletes.forget("pod-2")
	if deletes.has("pod-2") {
		t.Fatal("a forgotten write is still remembered")
	}
}

func TestParsedRecordsParseOnlyChangedNodes(t *testing.T) {
	sk := testPass().sk
	sk.UID = "uid"
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "node-uid", ResourceVersion: "1", Annotations: map[string]string{
		skyhookv1.NodeStateAnnotation(sk.Name): `{"a|1.0.0":{"name":"a","version":"1.0.0","image":"i","stage":"apply","state":"complete"}}`,
	}}}
	var records parsedRecords
	first := records.read(sk, []corev1.Node{node}, true, nil)[0]
	if first.err != nil || first.record.State["a|1.0.0"].State != skyhookv1.StateComplete {
		t.Fatalf("first read: %+v", first)
	}
	// Same resourceVersion: the parse of the last pass is reused, even
	// though the annotation (which cannot change without a new
	// resourceVersion) reads differently here.
	node.Annotations[skyhookv1.NodeStateAnnotation(sk.Name)] = `not json`
	if again := records.read(sk, []corev1.Node{node}, true, nil)[0]; again.err != nil {
		t.Fatalf("unchanged node parsed again: %v", again.err)
	}
	node.ResourceVersion = "2"
	if changed := records.read(sk, []corev1.Node{node}, true, nil)[0]; changed.err == nil {
		t.Fatal("a node with a new resourceVersion was not parsed again")
	}
}

func TestBatchStatesPreferTheNewerBatch(t *testing.T) {
	sk := testPass().sk
	sk.UID = "uid"
	sk.Status.Compartments = []skyhookv1.CompartmentStatus{{Name: "canary", Batch: 3}, {Name: "rest", Batch: 1}}
	var batches batchStates
	// Nothing in memory (a restart): the status is read.
	if got := batches.load(sk); got["canary"].Batch != 3 || got["rest"].Batch != 1 {
		t.Fatalf("from the status: %+v", got)
	}
	// The cached status lags this operator's own writes: memory wins when
	// it is as new or newer.
	batches.store(sk.UID, []skyhookv1.CompartmentStatus{{Name: "canary", Batch: 2}, {Name: "rest", Batch: 2, ConsecutiveFailures: 1}})
	got := batches.load(sk)
	if got["canary"].Batch != 3 || got["rest"].Batch != 2 || got["rest"].ConsecutiveFailures != 1 {
		t.Fatalf("memory and status: %+v", got)
	}
	batches.forget(sk.UID)
	if got := batches.load(sk); got["rest"].Batch != 1 {
		t.Fatalf("after forget: %+v", got)
	}
}
