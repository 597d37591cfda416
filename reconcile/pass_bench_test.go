package reconcile

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	"github.com/skyhook-go/skyhook/api/nodestate"
	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// BenchmarkPass is one rollout pass of a Skyhook with 5 packages over
// 10,000 nodes, in memory, with no API server: nodes and pods are read from
// maps as the informer cache serves them (memCache), writes are counted and
// dropped (the rollout's behaviour is tested against a real API server;
// this measures the operator's own work per pass). Mid-rollout: 8,000
// nodes complete, 1,000 running a stage (the budget, 10%), 1,000 waiting.
//
//   - one-node-changed: a complete node's label changes, as a node event
//     does; the pass visits that node and reads the queue head.
//   - full: every node is visited, as at start-up or after a spec change.
//
// `go test ./reconcile -run '^$' -bench Pass -benchmem` (no cluster starts).
func BenchmarkPass(b *testing.B) {
	for _, full := range []bool{false, true} {
		name := "one-node-changed"
		if full {
			name = "full"
		}
		b.Run(name, func(b *testing.B) {
			ctx := context.Background()
			r, sk := benchFleet(b, 10000, 5)
			if _, err := r.rollout(ctx, sk); err != nil { // builds the view
				b.Fatal(err)
			}
			changed := &corev1.Node{}
			if err := r.Client.Get(ctx, client.ObjectKey{Name: "node-00042"}, changed); err != nil {
				b.Fatal(err)
			}
			mem := r.Client.(*memCache)
			mem.writes = 0
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				b.StopTimer()
				changed = changed.DeepCopy() // a new object, as an informer's update
				changed.Labels["rack"] = fmt.Sprint(i)
				mem.nodes[changed.Name] = changed
				if full {
					r.memory.Changes.All(skyhookv1.RefOf(sk))
				} else {
					r.memory.Changes.Node(skyhookv1.RefOf(sk), changed.Name)
				}
				b.StartTimer()
				if _, err := r.rollout(ctx, sk); err != nil {
					b.Fatal(err)
				}
			}
			b.StopTimer()
			b.ReportMetric(float64(mem.writes)/float64(b.N), "writes/op")
			if got := sk.Status.CompleteNodes; got != "8000/10000" {
				b.Fatalf("status says %s complete, want 8000/10000", got)
			}
			if sk.Status.NodesInProgress != 1000 {
				b.Fatalf("status says %d in progress, want 1000", sk.Status.NodesInProgress)
			}
		})
	}
}

// benchFleet is a reconciler over a fake client holding n nodes and the
// Skyhook with pkgs packages: 80% of the nodes complete, 10% running the
// apply of every package (with its stage pods), 10% not started.
func benchFleet(b *testing.B, n, pkgs int) (*SkyhookReconciler, *skyhookv1.Skyhook) {
	b.Helper()
	percent := 10
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", UID: "bench-uid", Generation: 1},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"fleet": "bench"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Percent: &percent},
			Packages:           skyhookv1.Packages{},
		},
	}
	for i := range pkgs {
		name := fmt.Sprintf("pkg-%c", 'a'+i)
		sk.Spec.Packages[name] = skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: name, Version: "1.0.0"}, Image: "example.com/" + name}
	}
	objects := []client.Object{sk}
	mem := &memCache{nodes: map[string]*corev1.Node{}, pods: map[string][]*corev1.Pod{}}
	for i := range n {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%05d", i), UID: types.UID(fmt.Sprint("uid-", i)),
			Labels: map[string]string{"fleet": "bench"}, Annotations: map[string]string{}}}
		node.Status.Conditions = []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}
		state, status := skyhookv1.NodeState{}, skyhookv1.StatusComplete
		stage, entryState := skyhookv1.StageConfig, skyhookv1.StateComplete
		switch {
		case i%10 == 9:
			state = nil // not started
		case i%10 == 8:
			stage, entryState, status = skyhookv1.StageApply, skyhookv1.StateInProgress, skyhookv1.StatusInProgress
		}
		for name, p := range sk.Spec.Packages {
			if state == nil {
				break
			}
			state[skyhookv1.NodeStateKey(name, p.Version)] = skyhookv1.PackageStatus{Name: name, Version: p.Version, Image: p.Image, Stage: stage, State: entryState}
			if entryState == skyhookv1.StateInProgress {
				pod := stagepod.Build(stagepod.Spec{Skyhook: sk, Package: name, Definition: p, Version: p.Version, Image: p.Image,
					Stage: stage, Node: node.Name, Namespace: "skyhook-system", AgentImage: "agent", PauseImage: "pause"})
				mem.pods[node.Name] = append(mem.pods[node.Name], pod)
			}
		}
		if state != nil {
			applyRecord(b, node, sk.Name, nodestate.Record{State: state, Status: status})
		}
		mem.nodes[node.Name] = node
		mem.names = append(mem.names, node.Name)
	}
	mem.Client = fake.NewClientBuilder().WithScheme(scheme.New()).WithObjects(objects...).WithStatusSubresource(&skyhookv1.Skyhook{}).Build()
	r := &SkyhookReconciler{Client: mem, APIReader: mem, Namespace: "skyhook-system", AgentImage: "agent", PauseImage: "pause", MaxAttempts: 5,
		Parallelism: defaultParallelism, RuntimeRequiredTaint: stagepod.DefaultRuntimeRequiredTaint, NotReadyTimeout: defaultNotReadyTimeout,
		RebootTimeout: defaultRebootTimeout, StageTimeout: defaultStageTimeout, Recorder: &events.FakeRecorder{}}
	return r, sk
}

// applyRecord writes the record on the node as the operator's patch would.
func applyRecord(b *testing.B, node *corev1.Node, skyhook string, rec nodestate.Record) {
	patch, err := nodestate.Patch(node, skyhookv1.Skyhooks.Named(skyhook), rec)
	if err != nil {
		b.Fatal(err)
	}
	var into struct {
		Metadata struct {
			Labels, Annotations map[string]*string
		}
	}
	if err := json.Unmarshal(patch, &into); err != nil {
		b.Fatal(err)
	}
	for k, v := range into.Metadata.Labels {
		if v != nil {
			node.Labels[k] = *v
		}
	}
	for k, v := range into.Metadata.Annotations {
		if v != nil {
			node.Annotations[k] = *v
		}
	}
}

// memCache serves nodes and stage pods from maps, as controller-runtime's
// informer cache serves them (a copy on Get, shallow copies on a List
// without deep copy), and counts and drops the writes to them; everything
// else (the Skyhook, snapshots) goes to the fake client it wraps. It is the
// benchmark's stand-in for the cache: the fake client's reads convert every
// object through JSON, which would measure the fake, not the pass.
type memCache struct {
	client.Client
	nodes  map[string]*corev1.Node
	names  []string
	pods   map[string][]*corev1.Pod
	writes int
}

func (m *memCache) Get(ctx context.Context, key client.ObjectKey, obj client.Object, opts ...client.GetOption) error {
	if node, ok := obj.(*corev1.Node); ok {
		found, ok := m.nodes[key.Name]
		if !ok {
			return apierrors.NewNotFound(corev1.Resource("nodes"), key.Name)
		}
		found.DeepCopyInto(node)
		return nil
	}
	return m.Client.Get(ctx, key, obj, opts...)
}

func (m *memCache) List(ctx context.Context, list client.ObjectList, opts ...client.ListOption) error {
	o := &client.ListOptions{}
	o.ApplyOptions(opts)
	switch l := list.(type) {
	case *corev1.NodeList:
		names := m.names
		if o.FieldSelector != nil {
			name, ok := o.FieldSelector.RequiresExactMatch(nodeNameField)
			if !ok {
				return fmt.Errorf("unsupported field selector %s", o.FieldSelector)
			}
			names = nil
			if _, found := m.nodes[name]; found {
				names = []string{name}
			}
		}
		for _, name := range names {
			if n := m.nodes[name]; o.LabelSelector == nil || o.LabelSelector.Matches(labels.Set(n.Labels)) {
				l.Items = append(l.Items, *n)
			}
		}
		return nil
	case *corev1.PodList:
		var from [][]*corev1.Pod
		if node, ok := exactNode(o); ok {
			from = append(from, m.pods[node])
		} else {
			for _, pods := range m.pods {
				from = append(from, pods)
			}
		}
		for _, pods := range from {
			for _, p := range pods {
				if o.LabelSelector == nil || o.LabelSelector.Matches(labels.Set(p.Labels)) {
					l.Items = append(l.Items, *p)
				}
			}
		}
		return nil
	}
	return m.Client.List(ctx, list, opts...)
}

func (m *memCache) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	if _, ok := obj.(*corev1.Node); ok {
		m.writes++
		return nil
	}
	return m.Client.Patch(ctx, obj, patch, opts...)
}

func (m *memCache) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	if _, ok := obj.(*corev1.Pod); ok {
		m.writes++
		return nil
	}
	return m.Client.Create(ctx, obj, opts...)
}

func (m *memCache) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	if _, ok := obj.(*corev1.Pod); ok {
		m.writes++
		return nil
	}
	return m.Client.Delete(ctx, obj, opts...)
}

func (m *memCache) Status() client.SubResourceWriter { return memStatus{m} }

// memStatus counts and drops node status writes (the node conditions).
type memStatus struct{ m *memCache }

func (s memStatus) Create(ctx context.Context, obj client.Object, sub client.Object, opts ...client.SubResourceCreateOption) error {
	return s.m.Client.Status().Create(ctx, obj, sub, opts...)
}

func (s memStatus) Update(ctx context.Context, obj client.Object, opts ...client.SubResourceUpdateOption) error {
	return s.m.Client.Status().Update(ctx, obj, opts...)
}

func (s memStatus) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.SubResourcePatchOption) error {
	if _, ok := obj.(*corev1.Node); ok {
		s.m.writes++
		return nil
	}
	return s.m.Client.Status().Patch(ctx, obj, patch, opts...)
}

func (s memStatus) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.SubResourceApplyOption) error {
	return s.m.Client.Status().Apply(ctx, obj, opts...)
}

// exactNode is the node a pod list asks for by podNodeField.
func exactNode(o *client.ListOptions) (string, bool) {
	if o.FieldSelector == nil {
		return "", false
	}
	return o.FieldSelector.RequiresExactMatch(podNodeField)
}
