package memory

import (
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func skyhook(uid types.UID) *skyhookv1.Skyhook {
	return &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "sk", UID: uid, Generation: 3}}
}

// fill puts something in every store for the Skyhook.
func fill(m *Memory[int], uid types.UID, name string) {
	sk := skyhook(uid)
	sk.Name = name
	ref := skyhookv1.Skyhooks.Named(name)
	m.Track(uid, ref)
	m.Started.Add(uid, "node-1")
	m.StatusWrites.Wrote(uid)
	m.RolloutVersions.Record(uid, "7")
	m.Written.Record(uid, "node-uid", []byte(`{}`))
	m.NodeVersions.Record(uid, "node-uid", "42")
	m.Batches.Store(uid, []skyhookv1.CompartmentStatus{{Name: "canary", Batch: 1}})
	m.Records.Read(sk, []corev1.Node{{ObjectMeta: metav1.ObjectMeta{Name: "node-1"}}}, true, nil)
	m.Deleted.Add(uid, "pod-uid")
	m.Created.Add(uid, "pod-name")
	m.StageEnds.First(uid, "pod-uid")
	view, _, _ := m.BeginPass(ref, "basis", time.Now())
	view.Works["node-1"] = 1
	m.Changes.Node(ref, "node-2")
}

// stores names the stores holding something for the Skyhook.
func stores(m *Memory[int], skyhook string) map[string]bool {
	out := map[string]bool{}
	for _, h := range m.Held() {
		if h.Name == skyhook {
			out[h.Store] = true
		}
	}
	return out
}

func TestForgetDropsEveryStore(t *testing.T) {
	var m Memory[int]
	fill(&m, "uid-a", "a")
	fill(&m, "uid-b", "b")
	if got := stores(&m, "a"); len(got) != 13 {
		t.Fatalf("filled stores of a: %v, want all 13 (every store and the name)", got)
	}
	m.Forget("uid-a", skyhookv1.Skyhooks.Named("a"))
	if got := stores(&m, "a"); len(got) != 0 {
		t.Fatalf("after Forget, still held for a: %v", got)
	}
	if got := stores(&m, "b"); len(got) != 13 {
		t.Fatalf("Forget of a took from b: %v", got)
	}
	// Found gone by name only: the UID tracked under the name.
	m.Forget("", skyhookv1.Skyhooks.Named("b"))
	if held := m.Held(); len(held) != 0 {
		t.Fatalf("after Forget by name, still held: %+v", held)
	}
}

func TestTrackForgetsASkyhookReplacedUnderItsName(t *testing.T) {
	var m Memory[int]
	fill(&m, "uid-old", "a")
	m.Track("uid-new", skyhookv1.Skyhooks.Named("a"))
	for _, h := range m.Held() {
		if h.Store != "names" && h.Store != "changes" {
			t.Errorf("the replaced Skyhook's memory is left: %+v", h)
		}
	}
	m.Track("uid-new", skyhookv1.Skyhooks.Named("a")) // the same one again forgets nothing
	m.Started.Add("uid-new", "node-1")
	m.Track("uid-new", skyhookv1.Skyhooks.Named("a"))
	if !m.Started.Has("uid-new", "node-1") {
		t.Fatal("tracking the same Skyhook again forgot it")
	}
}

func TestHeldNamesAnUntrackedSkyhookByUID(t *testing.T) {
	var m Memory[int]
	m.StatusWrites.Wrote("orphan")
	if held := m.Held(); len(held) != 1 || held[0].Name != "orphan" || held[0].Kind != "" || held[0].Store != "statusWrites" {
		t.Fatalf("held: %+v", held)
	}
}

func TestStatusWritesHoldOnlyCounterChangesWithinTheInterval(t *testing.T) {
	var writes StatusWrites
	before := skyhook("uid")
	moved := before.DeepCopy()
	moved.Status.CompleteNodes, moved.Status.NodesInProgress = "5/10", 3
	if _, hold := writes.Hold(before, moved); hold {
		t.Fatal("held a write with no earlier write")
	}
	writes.Wrote(before.UID)
	wait, hold := writes.Hold(before, moved)
	if !hold || wait <= 0 || wait > StatusInterval {
		t.Fatalf("counters moved right after a write: hold %v wait %s, want held up to %s", hold, wait, StatusInterval)
	}
	ready := moved.DeepCopy()
	conditions.MarkTrue(ready, meta.ReadyCondition, meta.SucceededReason, "done")
	if _, hold := writes.Hold(before, ready); hold {
		t.Fatal("held a transition (Ready)")
	}
	finalizer := moved.DeepCopy()
	finalizer.Finalizers = []string{"skyhook.nvidia.com/skyhook"}
	if _, hold := writes.Hold(before, finalizer); hold {
		t.Fatal("held a finalizer change")
	}
}

func TestStartedNodesAndWrittenRecordsArePerSkyhook(t *testing.T) {
	var started Started
	started.Add("a", "node-1")
	if !started.Has("a", "node-1") || started.Has("b", "node-1") {
		t.Fatal("started: not per Skyhook")
	}
	started.Remove("a", "node-1")
	started.Add("a", "node-2")
	started.forget("a")
	if started.Has("a", "node-1") || started.Has("a", "node-2") {
		t.Fatal("started: remove or forget kept a node")
	}
	var written Written
	written.Record("a", "node-uid", []byte(`{"x":1}`))
	if !written.Same("a", "node-uid", []byte(`{"x":1}`)) || written.Same("a", "node-uid", []byte(`{"x":2}`)) || written.Same("b", "node-uid", []byte(`{"x":1}`)) {
		t.Fatal("written: Same answers wrong")
	}
	written.forget("a")
	if written.Same("a", "node-uid", []byte(`{"x":1}`)) {
		t.Fatal("written: forget kept the record")
	}
}

func TestANodeCachedBeforeTheLastWriteIsBehind(t *testing.T) {
	var versions NodeVersions
	node := func(rv string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{UID: "node-uid", ResourceVersion: rv}}
	}
	if versions.Behind("a", node("1")) {
		t.Fatal("behind a write never made")
	}
	versions.Record("a", "node-uid", "100")
	for rv, behind := range map[string]bool{"99": true, "100": false, "101": false, "1000": false, "not-a-version": false} {
		if got := versions.Behind("a", node(rv)); got != behind {
			t.Errorf("cached at %s after a write at 100: behind %v, want %v", rv, got, behind)
		}
	}
	if versions.Behind("b", node("99")) {
		t.Error("behind another Skyhook's write")
	}
	versions.forget("a")
	if versions.Behind("a", node("99")) {
		t.Error("forget kept the write")
	}
}

func TestRecentWritesAreForgottenAfterTheWindow(t *testing.T) {
	var deletes Recent
	deletes.Add("a", "pod-1")
	if !deletes.Has("a", "pod-1") || deletes.Has("a", "pod-2") || deletes.Has("b", "pod-1") {
		t.Fatal("recent delete not remembered, or not per Skyhook")
	}
	deletes.m["a"]["pod-1"] = time.Now().Add(-RecentWindow) // as if deleted a window ago
	if deletes.Has("a", "pod-1") {
		t.Fatal("a delete older than the window is still remembered")
	}
	deletes.lastPrune = time.Time{}
	deletes.Add("a", "pod-2") // prunes
	if _, kept := deletes.m["a"]["pod-1"]; kept || len(deletes.m["a"]) != 1 {
		t.Fatalf("prune kept %v", deletes.m)
	}
	if left := deletes.Left("a", "pod-2"); left <= 0 || left > RecentWindow {
		t.Fatalf("pod-2 remembered for %s more", left)
	}
	deletes.Drop("a", "pod-2")
	if deletes.Has("a", "pod-2") {
		t.Fatal("a dropped write is still remembered")
	}
}

func TestPruneDropsASkyhookLeftWithNothing(t *testing.T) {
	var ends StageEnds
	if !ends.First("a", "pod-1") || ends.First("a", "pod-1") {
		t.Fatal("an end is first once")
	}
	ends.m["a"]["pod-1"] = time.Now().Add(-2 * StageEndWindow)
	ends.lastPrune = time.Time{}
	ends.First("b", "pod-2") // prunes
	if _, ok := ends.sizes()["a"]; ok {
		t.Fatalf("a Skyhook with only old ends is still held: %v", ends.sizes())
	}
}

func TestParsedRecordsParseOnlyChangedNodes(t *testing.T) {
	sk := skyhook("uid")
	node := corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", UID: "node-uid", ResourceVersion: "1", Annotations: map[string]string{
		skyhookv1.NodeStateAnnotation(sk.Name): `{"a|1.0.0":{"name":"a","version":"1.0.0","image":"i","stage":"apply","state":"complete"}}`,
	}}}
	var records Records
	first := records.Read(sk, []corev1.Node{node}, true, nil)[0]
	if first.Err != nil || first.Record.State["a|1.0.0"].State != skyhookv1.StateComplete || !first.Fresh {
		t.Fatalf("first read: %+v", first)
	}
	// Same resourceVersion: the parse of the last pass is reused, even
	// though the annotation (which cannot change without a new
	// resourceVersion) reads differently here.
	node.Annotations[skyhookv1.NodeStateAnnotation(sk.Name)] = `not json`
	if again := records.Read(sk, []corev1.Node{node}, true, nil)[0]; again.Err != nil || again.Fresh {
		t.Fatalf("unchanged node parsed again: %+v", again)
	}
	node.ResourceVersion = "2"
	if changed := records.Read(sk, []corev1.Node{node}, true, nil)[0]; changed.Err == nil {
		t.Fatal("a node with a new resourceVersion was not parsed again")
	}
}

func TestBatchStatesPreferTheNewerBatch(t *testing.T) {
	sk := skyhook("uid")
	sk.Status.Compartments = []skyhookv1.CompartmentStatus{{Name: "canary", Batch: 3}, {Name: "rest", Batch: 1}}
	var batches Batches
	// Nothing in memory (a restart): the status is read.
	if got := batches.Load(sk); got["canary"].Batch != 3 || got["rest"].Batch != 1 {
		t.Fatalf("from the status: %+v", got)
	}
	// The cached status lags this operator's own writes: memory wins when
	// it is as new or newer.
	batches.Store(sk.UID, []skyhookv1.CompartmentStatus{{Name: "canary", Batch: 2}, {Name: "rest", Batch: 2, ConsecutiveFailures: 1}})
	got := batches.Load(sk)
	if got["canary"].Batch != 3 || got["rest"].Batch != 2 || got["rest"].ConsecutiveFailures != 1 {
		t.Fatalf("memory and status: %+v", got)
	}
	batches.forget(sk.UID)
	if got := batches.Load(sk); got["rest"].Batch != 1 {
		t.Fatalf("after forget: %+v", got)
	}
}

func TestBeginPassVisitsChangedAndDueNodesUntilTheBasisChanges(t *testing.T) {
	var m Memory[int]
	a := skyhookv1.Skyhooks.Named("a")
	now := time.Now()
	if _, _, full := m.BeginPass(a, "gen-1", now); !full {
		t.Fatal("the first pass is not full")
	}
	m.Changes.Node(a, "node-2")
	m.Changes.Node(a, "node-1")
	view, visit, full := m.BeginPass(a, "gen-1", now)
	if full || len(visit) != 2 || visit[0] != "node-1" || visit[1] != "node-2" {
		t.Fatalf("visit %v full %v, want node-1 and node-2", visit, full)
	}
	view.Works["node-1"] = 1
	if _, _, full := m.BeginPass(a, "gen-2", now); !full {
		t.Fatal("a new basis is not a full pass")
	}
	if _, _, full := m.BeginPass(a, "gen-2", now.Add(FullPassEvery+time.Second)); !full {
		t.Fatal("a view older than FullPassEvery is trusted")
	}
	m.DropView(a)
	if _, _, full := m.BeginPass(a, "gen-2", now); !full {
		t.Fatal("a dropped view is kept")
	}
}

// A Skyhook and a NodeWright of the same name are two rollouts: forgetting
// one leaves the other's memory, and their views and changes are apart.
func TestRolloutsOfTwoKindsWithOneNameAreApart(t *testing.T) {
	var m Memory[int]
	sk, nw := skyhookv1.Skyhooks.Named("gpu"), skyhookv1.NodeWrights.Named("gpu")
	m.Track("uid-sk", sk)
	m.Track("uid-nw", nw)
	m.StatusWrites.Wrote("uid-sk")
	m.StatusWrites.Wrote("uid-nw")
	m.Changes.Node(nw, "node-1")
	if _, visit, _ := m.BeginPass(sk, "b", time.Now()); visit != nil {
		t.Fatalf("the Skyhook's pass took the NodeWright's changes: %v", visit)
	}
	m.Forget("", sk)
	var left []string
	for _, h := range m.Held() {
		left = append(left, h.Kind+"/"+h.Name+"/"+h.Store)
	}
	if len(left) != 3 || left[0] != "NodeWright/gpu/changes" || left[1] != "NodeWright/gpu/names" || left[2] != "NodeWright/gpu/statusWrites" {
		t.Fatalf("after forgetting the Skyhook: %v, want the NodeWright's changes, name and status write", left)
	}
}

// A cached rollout older than the operator's last write to it is behind;
// a response overtaken by a later write's does not move the mark back.
func TestRolloutVersionsTellACacheBehindTheLastWrite(t *testing.T) {
	var v RolloutVersions
	if v.Behind("uid", "5") {
		t.Fatal("behind with no write recorded")
	}
	v.Record("uid", "10")
	v.Record("uid", "8") // an earlier patch's response, read after the later one's
	for rv, want := range map[string]bool{"9": true, "10": false, "11": false, "not-a-version": false} {
		if got := v.Behind("uid", rv); got != want {
			t.Errorf("Behind(%q) = %t after writes at 10 and 8, want %t", rv, got, want)
		}
	}
	if v.Behind("other", "1") {
		t.Error("another rollout's write counts")
	}
}
