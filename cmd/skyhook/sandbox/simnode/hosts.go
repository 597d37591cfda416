package simnode

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
)

// StagePodSelector selects the operator's stage pods (its stage label; see
// reconcile/stagepod).
const StagePodSelector = "skyhook.nvidia.com/stage"

// InterruptPodSelector selects the stage pods that run an interrupt, after
// an install or after an uninstall (the operator's stage label; see
// reconcile/stagepod).
const InterruptPodSelector = StagePodSelector + " in (interrupt,uninstall-interrupt)"

// HostSimulator plays the part of the hosts where KWOK's kubelet cannot: a
// stage pod's init container run as
// `interrupt <host-root> <copy-dir> <spec>`, that exits 0 with a spec of
// type reboot reboots its node (Fleet.Reboot, with a new boot ID derived from the
// pod). A real agent reboots while it runs; rebooting once it has exited
// is the simulator's approximation, and each pod reboots its node once.
type HostSimulator struct {
	mu sync.Mutex
	// downtime is how long a reboot keeps a node NotReady, per node where
	// SetDowntime said so.
	downtime     time.Duration
	nodeDowntime map[string]time.Duration
	// Reboots counts the reboots per node.
	reboots map[string]int
	handled map[types.UID]bool
}

// SimulateHosts starts a HostSimulator that looks at the interrupt pods of
// the simulated nodes (a real node's agent does what they ask) every 100ms
// until ctx ends; downtime is how long a reboot keeps the node
// NotReady.
func (f *Fleet) SimulateHosts(ctx context.Context, downtime time.Duration) *HostSimulator {
	h := &HostSimulator{reboots: map[string]int{}, handled: map[types.UID]bool{}, downtime: downtime, nodeDowntime: map[string]time.Duration{}}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		pods, err := f.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: InterruptPodSelector})
		if err != nil {
			return
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if h.seen(pod.UID) || !rebootDone(pod) || f.isReal(pod.Spec.NodeName) {
				continue
			}
			if err := f.Reboot(ctx, pod.Spec.NodeName, "boot-"+string(pod.UID)[:8], h.downtimeOf(pod.Spec.NodeName)); err == nil {
				h.rebooted(pod.UID, pod.Spec.NodeName)
			}
		}
	}, 100*time.Millisecond)
	return h
}

// SetDowntime makes the node's reboots last d (a node slow to come back).
func (h *HostSimulator) SetDowntime(node string, d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nodeDowntime[node] = d
}

func (h *HostSimulator) downtimeOf(node string) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if d, ok := h.nodeDowntime[node]; ok {
		return d
	}
	return h.downtime
}

// Reboots returns how often each node was rebooted by an interrupt pod.
func (h *HostSimulator) Reboots() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := make(map[string]int, len(h.reboots))
	for k, v := range h.reboots {
		out[k] = v
	}
	return out
}

func (h *HostSimulator) seen(uid types.UID) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.handled[uid]
}

func (h *HostSimulator) rebooted(uid types.UID, node string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled[uid] = true
	h.reboots[node]++
}

// rebootDone reports whether the pod's interrupt container (the agent in
// its interrupt mode: after an install, or after an uninstall) asked for a
// reboot and exited 0.
func rebootDone(pod *corev1.Pod) bool {
	container := ""
	for _, c := range pod.Spec.InitContainers {
		if len(c.Args) < 4 || c.Args[0] != "interrupt" {
			continue
		}
		var spec struct{ Type string }
		if json.Unmarshal([]byte(c.Args[3]), &spec) == nil && spec.Type == "reboot" {
			container = c.Name
		}
	}
	if container == "" {
		return false
	}
	for _, s := range pod.Status.InitContainerStatuses {
		if s.Name == container && s.State.Terminated != nil && s.State.Terminated.ExitCode == 0 {
			return true
		}
	}
	return false
}
