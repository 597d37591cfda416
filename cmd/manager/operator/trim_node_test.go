package operator

import (
	"fmt"
	"reflect"
	"runtime"
	"testing"
	"time"
	"unsafe"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8stypes "k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// simNode is node i of a simulated fleet as the apiserver serves it: the
// labels and annotations a cluster and a rollout put on it, the kubelet's
// five conditions and a rollout's two, capacity and addresses.
func simNode(i int) *corev1.Node {
	name := fmt.Sprintf("sim-%05d", i)
	now := metav1.NewTime(time.Unix(1_790_000_000, 0))
	node := &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: name, UID: k8stypes.UID(uid(i)), ResourceVersion: fmt.Sprint(1000 + i),
			Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
				"type": "kwok", "pool": "gpu", "nvidia.com/gpu.product": "H100", "skyhook.nvidia.com/status_demo": "complete"},
			Annotations: map[string]string{"node.alpha.kubernetes.io/ttl": "0", "kwok.x-k8s.io/node": "fake",
				"skyhook.nvidia.com/nodeState_demo": `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"ghcr.io/x/tuning","stage":"config","state":"complete"}}`,
				"skyhook.nvidia.com/version_demo":   "v0.9.0"},
		},
		Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "nvidia.com/gpu", Value: "present", Effect: corev1.TaintEffectNoSchedule}}},
		Status: corev1.NodeStatus{
			Capacity:        corev1.ResourceList{},
			Addresses:       []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: fmt.Sprintf("10.0.%d.%d", i/250, i%250)}, {Type: corev1.NodeHostName, Address: name}},
			NodeInfo:        corev1.NodeSystemInfo{BootID: "boot-" + uid(i), MachineID: uid(i), KubeletVersion: "v1.36.0", ContainerRuntimeVersion: "containerd://2.2.0", OSImage: "Ubuntu 24.04"},
			Conditions:      []corev1.NodeCondition{},
			DaemonEndpoints: corev1.NodeDaemonEndpoints{KubeletEndpoint: corev1.DaemonEndpoint{Port: 10250}},
		},
	}
	for _, c := range [][4]string{
		{"Ready", "True", "KubeletReady", "kubelet is posting ready status"},
		{"MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"},
		{"DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"},
		{"PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"},
		{"NetworkUnavailable", "False", "RouteCreated", "RouteController created a route"},
		{"skyhook.nvidia.com/demo/NotReady", "False", "Complete", "All packages for Skyhook demo complete"},
		{"skyhook.nvidia.com/demo/Erroring", "False", "Not Erroring", "not erroring"},
	} {
		node.Status.Conditions = append(node.Status.Conditions, corev1.NodeCondition{Type: corev1.NodeConditionType(c[0]),
			Status: corev1.ConditionStatus(c[1]), Reason: c[2], Message: c[3], LastHeartbeatTime: now, LastTransitionTime: now})
	}
	return decoded(node)
}

func uid(i int) string { return fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i) }

// decoded is obj as an informer gets it: decoded from the wire, every
// string its own allocation.
func decoded[T interface{ Marshal() ([]byte, error) }](obj T) T {
	data, err := obj.Marshal()
	if err != nil {
		panic(err)
	}
	out := reflect.New(reflect.TypeOf(obj).Elem()).Interface().(interface{ Unmarshal([]byte) error })
	if err := out.Unmarshal(data); err != nil {
		panic(err)
	}
	return out.(T)
}

// A cached node keeps what the passes read, unchanged, and nodes decoded
// apart share the strings they have in common.
func TestTrimNodeKeepsWhatThePassesReadAndSharesStrings(t *testing.T) {
	original := simNode(1)
	got, err := trimNode(simNode(1))
	if err != nil {
		t.Fatal(err)
	}
	trimmed := got.(*corev1.Node)
	if !reflect.DeepEqual(trimmed.Labels, original.Labels) || !reflect.DeepEqual(trimmed.Annotations, original.Annotations) ||
		!reflect.DeepEqual(trimmed.Status.Conditions, original.Status.Conditions) || !reflect.DeepEqual(trimmed.Spec.Taints, original.Spec.Taints) ||
		trimmed.Status.NodeInfo.BootID != original.Status.NodeInfo.BootID ||
		trimmed.Status.NodeInfo.KubeletVersion != "v1.36.0" || trimmed.Status.NodeInfo.ContainerRuntimeVersion != "containerd://2.2.0" {
		t.Errorf("trimmed node reads differently:\n%+v\nwas\n%+v", trimmed, original)
	}
	if len(trimmed.Status.Addresses) != 0 || trimmed.Status.NodeInfo.OSImage != "" {
		t.Errorf("trimmed node keeps what no pass reads: %+v", trimmed.Status)
	}
	other, _ := trimNode(simNode(2))
	a, b := trimmed.Status.Conditions[1].Message, other.(*corev1.Node).Status.Conditions[1].Message
	if unsafe.StringData(a) != unsafe.StringData(b) {
		t.Errorf("two cached nodes hold their own copies of %q", a)
	}
	state := "skyhook.nvidia.com/nodeState_demo"
	if unsafe.StringData(trimmed.Annotations[state]) != unsafe.StringData(other.(*corev1.Node).Annotations[state]) {
		t.Errorf("two nodes in the same state hold their own copies of their record")
	}
}

// The table of shared strings is bounded: at its limit it starts over,
// and the strings it returned before stay what they were.
func TestStringTableStartsOverAtItsLimit(t *testing.T) {
	table := &stringTable{limit: 2}
	a := table.intern(string([]byte("alpha")))
	table.intern("b")
	if len(table.strings) != 2 {
		t.Fatalf("table holds %d strings, want 2", len(table.strings))
	}
	table.intern("c")
	if len(table.strings) != 1 || table.strings["c"] != "c" {
		t.Errorf("at its limit the table holds %v, want only c", table.strings)
	}
	again := table.intern(string([]byte("alpha")))
	if a != "alpha" || again != "alpha" || unsafe.StringData(a) == unsafe.StringData(again) {
		t.Errorf("after starting over: %q and %q (the first copy is no longer the table's)", a, again)
	}
	if table.intern("") != "" || len(table.strings) != 2 {
		t.Errorf("the empty string is stored: %v", table.strings)
	}
}

// simStagePod is a five-container stage pod of node i, finished, as the
// apiserver serves it.
func simStagePod(i int) *corev1.Pod {
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u1", Generation: 3},
		Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": {
			PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.1.0"}, Image: "ghcr.io/x/tuning"}}},
	}
	node := fmt.Sprintf("sim-%05d", i)
	pod := stagepod.Build(stagepod.Spec{Skyhook: sk, Package: "tuning", Definition: sk.Spec.Packages["tuning"], Version: "1.1.0",
		Image: "ghcr.io/x/tuning", Stage: skyhookv1.StageApply, Then: []skyhookv1.Stage{skyhookv1.StageConfig}, Timeout: time.Minute,
		Node: node, Namespace: "skyhook-system", AgentImage: "ghcr.io/skyhook/agent:1", ConfigMap: "demo-tuning",
		NodeLabels: map[string]string{"kubernetes.io/hostname": node, "pool": "gpu"}})
	pod.Name, pod.UID = pod.Name+fmt.Sprint(i), k8stypes.UID("pod-"+uid(i))
	now := metav1.NewTime(time.Unix(1_790_000_000, 0))
	pod.Status = corev1.PodStatus{Phase: corev1.PodSucceeded, PodIP: "10.0.0.1", StartTime: &now,
		Conditions: []corev1.PodCondition{{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: now},
			{Type: corev1.PodReady, Status: corev1.ConditionFalse, Reason: "PodCompleted", LastTransitionTime: now}}}
	for _, c := range append(pod.Spec.InitContainers, pod.Spec.Containers...) {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, corev1.ContainerStatus{Name: c.Name, Image: c.Image,
			ImageID: c.Image + "@sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef", ContainerID: "containerd://" + uid(i) + c.Name,
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 0, Reason: "Completed", StartedAt: now, FinishedAt: now}}})
	}
	return decoded(pod)
}

// BenchmarkCachedObjectSize reports the heap a cached node and a cached
// stage pod take, as decoded and as the operator's cache keeps them
// (docs/rollout.md, "The operator's memory at 10,000 × 5").
func BenchmarkCachedObjectSize(b *testing.B) {
	const count = 2000
	for _, c := range []struct {
		name  string
		build func(int) any
		trim  func(any) (any, error)
	}{
		{"node/decoded", func(i int) any { return simNode(i) }, nil},
		{"node/cached", func(i int) any { return simNode(i) }, trimNode},
		{"stagepod/decoded", func(i int) any { return simStagePod(i) }, nil},
		{"stagepod/cached", func(i int) any { return simStagePod(i) }, trimStagePod},
	} {
		b.Run(c.name, func(b *testing.B) {
			var perObject float64
			for b.Loop() {
				perObject = heapPerObject(count, c.build, c.trim)
			}
			b.ReportMetric(perObject, "B/object")
		})
	}
}

// heapPerObject is the live heap, after a collection, that count objects
// made and trimmed one after the other take, per object.
func heapPerObject(count int, build func(int) any, trim func(any) (any, error)) float64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	kept := make([]any, count)
	for i := range kept {
		kept[i] = build(i)
		if trim != nil {
			kept[i], _ = trim(kept[i])
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(kept)
	return float64(after.HeapAlloc-before.HeapAlloc) / float64(count)
}
