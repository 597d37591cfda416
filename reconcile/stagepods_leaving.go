package reconcile

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Which of a node's stage pods leave it: the ones behind the record
// (their stage done, or their uninstall ended), and the ones running what
// the spec no longer declares; and whether one still leaving holds up the
// package's next stage.

// finishedPods takes out of w.pods, and returns, the node's stage pods that
// are behind the cached record: their stage or a later one is recorded
// complete, or their version's record is gone (an uninstall ended) and they
// ran an uninstall or another version. They are to be deleted.
func finishedPods(sk *skyhookv1.Skyhook, w *nodeWork) []*corev1.Pod {
	views := sharedViews(w.pods)
	var finishedPods []*corev1.Pod
	for name, pods := range w.pods {
		kept := pods[:0]
		for _, pod := range pods {
			version := pod.Annotations[stagepod.VersionAnnotation]
			_, ok := w.state[skyhookv1.NodeStateKey(name, version)]
			podStage := lastStage(pod)
			finished := stageRecorded(w, name, pod)
			if podStage == skyhookv1.StageConfig {
				switch hash := pod.Annotations[stagepod.ConfigHashAnnotation]; {
				case hash == w.config[name]:
				case hash == stagepod.ConfigHash(sk.Spec.Packages[name].ConfigMap):
					finished = false // a rerun for a changed configMap, not recorded yet
				default: // ran with a configMap that changed again since
					finished = stagepod.Read(pod).Result != stagepod.Running
				}
			}
			// No record of its version: another version's pod, or an ended
			// uninstall's (kept, it would hold the node's budget slot).
			if !ok && (version != sk.Spec.Packages[name].Version || lifecycle.IsUninstall(podStage)) {
				finished = stagepod.Read(pod).Result != stagepod.Running
			}
			if !finished {
				kept = append(kept, pod)
				continue
			}
			finishedPods = append(finishedPods, pod)
		}
		w.pods[name] = kept
	}
	return wholePods(finishedPods, views)
}

// sharedViews counts the views of each pod of several packages among the
// node's (stagepod.Views), by UID.
func sharedViews(pods map[string][]*corev1.Pod) map[types.UID]int {
	var out map[types.UID]int
	for _, list := range pods {
		for _, pod := range list {
			if _, shared := pod.Annotations[stagepod.RunPackagesAnnotation]; shared {
				if out == nil {
					out = map[types.UID]int{}
				}
				out[pod.UID]++
			}
		}
	}
	return out
}

// wholePods are the finished views that stand for their whole pod: a pod
// of one package; one view of a pod of several once every package of it
// (views) is finished. A pod some package of which still runs, or is not
// recorded yet, stays.
func wholePods(finished []*corev1.Pod, views map[types.UID]int) []*corev1.Pod {
	count := map[types.UID]int{}
	var out []*corev1.Pod
	for _, pod := range finished {
		want, shared := views[pod.UID]
		if !shared {
			out = append(out, pod)
			continue
		}
		if count[pod.UID]++; count[pod.UID] == want {
			out = append(out, pod)
		}
	}
	return out
}

// stageRecorded reports whether the node's record has the pod's stage (the
// last of a run) done: it records that stage complete, or a later stage of
// that version. The cache can lag this operator's writes, so a pod ahead of
// the record (started after it was written) is not recorded.
func stageRecorded(w *nodeWork, name string, pod *corev1.Pod) bool {
	entry, ok := w.state[skyhookv1.NodeStateKey(name, pod.Annotations[stagepod.VersionAnnotation])]
	podStage := lastStage(pod)
	return ok && (lifecycle.Order(entry.Stage) > lifecycle.Order(podStage) ||
		(entry.Stage == podStage && entry.State == skyhookv1.StateComplete))
}

// outdatedPods takes out of w.pods, and returns, the node's stage pods that
// run what the spec no longer declares, as NodeWright replaces them: a
// version, an image, env, resources or an agent image the package no longer
// has, or a package the spec no longer has. Uninstall pods of a version the
// spec dropped are left to finish (nothing else can run them), and so are
// interrupts, which may be rebooting the node. Pods written by an operator
// that did not stamp the definition count as current.
func outdatedPods(sk *skyhookv1.Skyhook, w *nodeWork) []*corev1.Pod {
	var out []*corev1.Pod
	for name, pods := range w.pods {
		kept := pods[:0]
		for _, pod := range pods {
			if outdated(sk, name, pod) && !stageRecorded(w, name, pod) && stagepod.Read(pod).Result == stagepod.Running {
				out = append(out, pod)
				continue
			}
			kept = append(kept, pod)
		}
		w.pods[name] = kept
	}
	return out
}

// outdated reports whether a stage pod runs what the spec no longer
// declares (see outdatedPods).
func outdated(sk *skyhookv1.Skyhook, name string, pod *corev1.Pod) bool {
	stage := skyhookv1.Stage(pod.Labels[stagepod.StageLabel])
	if lifecycle.IsInterrupt(stage) {
		return false
	}
	d := declared(sk, name)
	if d == nil || pod.Annotations[stagepod.VersionAnnotation] != d.Version {
		return stage != skyhookv1.StageUninstall
	}
	hash, stamped := pod.Annotations[stagepod.DefinitionAnnotation]
	return stamped && hash != stagepod.DefinitionHash(*d)
}

// leavingUnrecorded reports whether a stage pod of the package is being
// deleted before its stage was recorded done (it was replaced, or its node
// skipped): its step may still be running, so no other stage of the package
// starts on the node until it is gone.
func leavingUnrecorded(w *nodeWork, name string) bool {
	for _, pod := range w.leaving[name] {
		if !stageRecorded(w, name, pod) {
			return true
		}
	}
	return false
}
