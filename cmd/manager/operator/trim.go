package operator

import (
	"slices"
	"sync"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// What the operator's cache keeps of the nodes and stage pods it watches.
// At 10,000 nodes and thousands of stage pods the cache is most of the
// operator's memory, so it keeps only what the passes read, and one copy of
// each string that many objects share (label keys and values, condition
// reasons and messages, images, the node records of nodes in the same
// state): each object decoded from the apiserver has its own copy of
// every one of them.

// trimNode drops what the operator never reads from cached nodes (image
// lists are the bulk of a node object on GPU hosts).
func trimNode(obj any) (any, error) {
	node, ok := obj.(*corev1.Node)
	if !ok {
		return obj, nil
	}
	internMeta(&node.ObjectMeta)
	// Of the status the operator reads the conditions, the boot ID and
	// the kubelet's and runtime's versions (whether the node mounts image
	// volumes); the rest (capacity, addresses, images, the node's system
	// info...) is half of a cached node, 35 MiB at 10,000 nodes.
	// The decoder grows slices by appending, so nine conditions sit in
	// room for sixteen: the cache keeps a copy of their size.
	info := node.Status.NodeInfo
	node.Status = corev1.NodeStatus{Conditions: slices.Clone(node.Status.Conditions),
		NodeInfo: corev1.NodeSystemInfo{BootID: info.BootID,
			KubeletVersion: intern(info.KubeletVersion), ContainerRuntimeVersion: intern(info.ContainerRuntimeVersion)}}
	for i := range node.Status.Conditions {
		c := &node.Status.Conditions[i]
		c.Type, c.Status = corev1.NodeConditionType(intern(string(c.Type))), corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason, c.Message = intern(c.Reason), intern(c.Message)
	}
	for i := range node.Spec.Taints {
		t := &node.Spec.Taints[i]
		t.Key, t.Value, t.Effect = intern(t.Key), intern(t.Value), corev1.TaintEffect(intern(string(t.Effect)))
	}
	return node, nil
}

// trimStagePod keeps of a stage pod what the operator reads: its
// metadata but for the snapshots the steps read through the downward API
// (stagepod.NodeLabelsAnnotation, NodeAnnotationsAnnotation,
// PackagesAnnotation: as large as the node's metadata and the Skyhook's
// package list), its status, and of its spec the node, the deadline, the
// grace period and the containers' names and images (which stage each runs,
// in order). A container's env, arguments, mounts and the volumes are about
// 17 KiB of a five-stage pod's 20 in memory, 84 MiB of the operator's heap
// with 5,000 stage pods (docs/scale.md).
func trimStagePod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil
	}
	// internMeta then copies what is left into a map of its size.
	delete(pod.Annotations, stagepod.NodeLabelsAnnotation)
	delete(pod.Annotations, stagepod.NodeAnnotationsAnnotation)
	delete(pod.Annotations, stagepod.PackagesAnnotation)
	internMeta(&pod.ObjectMeta)
	spec := pod.Spec
	pod.Spec = corev1.PodSpec{NodeName: intern(spec.NodeName), ActiveDeadlineSeconds: spec.ActiveDeadlineSeconds,
		TerminationGracePeriodSeconds: spec.TerminationGracePeriodSeconds, RestartPolicy: spec.RestartPolicy,
		InitContainers: containerNames(spec.InitContainers), Containers: containerNames(spec.Containers)}
	internPodStatus(&pod.Status)
	return pod, nil
}

// containerNames are the containers with their names and images alone.
func containerNames(containers []corev1.Container) []corev1.Container {
	if containers == nil {
		return nil
	}
	out := make([]corev1.Container, len(containers))
	for i, c := range containers {
		out[i] = corev1.Container{Name: intern(c.Name), Image: intern(c.Image)}
	}
	return out
}

// internPodStatus shares the strings a pod's status repeats from other
// pods: its conditions' and containers' names, images and reasons. IDs
// (container IDs, IPs) are the pod's own and stay as decoded.
func internPodStatus(s *corev1.PodStatus) {
	s.Phase, s.Reason = corev1.PodPhase(intern(string(s.Phase))), intern(s.Reason)
	// Copies of their size, as for a node's conditions.
	s.Conditions = slices.Clone(s.Conditions)
	s.InitContainerStatuses, s.ContainerStatuses = slices.Clone(s.InitContainerStatuses), slices.Clone(s.ContainerStatuses)
	for i := range s.Conditions {
		c := &s.Conditions[i]
		c.Type, c.Status = corev1.PodConditionType(intern(string(c.Type))), corev1.ConditionStatus(intern(string(c.Status)))
		c.Reason, c.Message = intern(c.Reason), intern(c.Message)
	}
	for _, statuses := range [][]corev1.ContainerStatus{s.InitContainerStatuses, s.ContainerStatuses} {
		for i := range statuses {
			c := &statuses[i]
			c.Name, c.Image, c.ImageID = intern(c.Name), intern(c.Image), intern(c.ImageID)
			for _, state := range []*corev1.ContainerState{&c.State, &c.LastTerminationState} {
				if t := state.Terminated; t != nil {
					t.Reason, t.Message = intern(t.Reason), intern(t.Message)
				}
				if w := state.Waiting; w != nil {
					w.Reason, w.Message = intern(w.Reason), intern(w.Message)
				}
			}
		}
	}
}

// internMeta drops the managed fields (no pass reads them) and shares the
// labels', annotations' and owners' strings.
func internMeta(m *metav1.ObjectMeta) {
	m.ManagedFields = nil
	m.Labels, m.Annotations = internMap(m.Labels), internMap(m.Annotations)
	for i := range m.OwnerReferences {
		o := &m.OwnerReferences[i]
		o.APIVersion, o.Kind, o.Name = intern(o.APIVersion), intern(o.Kind), intern(o.Name)
	}
	for i, f := range m.Finalizers {
		m.Finalizers[i] = intern(f)
	}
}

// internMap is m with its keys and values shared; a new map, since a key
// cannot be swapped in place.
func internMap(m map[string]string) map[string]string {
	if m == nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[intern(k)] = intern(v)
	}
	return out
}

// intern is s's one shared copy.
func intern(s string) string { return cacheStrings.intern(s) }

// cacheStrings is the table of the strings the cache shares.
var cacheStrings = &stringTable{limit: 1 << 16}

// stringTable shares strings among the objects of the cache. Not the
// standard library's unique package: a string it returns is forgotten at
// the next collection unless its handle is kept, so objects decoded in
// different cycles (at 10,000 nodes, nearly all of them) would each keep
// their own copy again. The table is bounded instead: when it holds limit
// strings it starts over, which frees no string an object still holds and
// only means the next copies are shared from then on.
type stringTable struct {
	mu      sync.Mutex
	limit   int
	strings map[string]string
}

func (t *stringTable) intern(s string) string {
	if s == "" {
		return s
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if shared, ok := t.strings[s]; ok {
		return shared
	}
	if t.strings == nil || len(t.strings) >= t.limit {
		t.strings = make(map[string]string, min(t.limit, 1024))
	}
	t.strings[s] = s
	return s
}
