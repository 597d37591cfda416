package drain

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/utils/ptr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func running(namespace, name string, edit ...func(*corev1.Pod)) *corev1.Pod {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name,
		OwnerReferences: []metav1.OwnerReference{{Kind: "ReplicaSet", Name: "rs", Controller: ptr.To(true)}}},
		Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	for _, e := range edit {
		e(pod)
	}
	return pod
}

func bare(p *corev1.Pod) { p.OwnerReferences = nil }
func emptyDir(p *corev1.Pod) {
	p.Spec.Volumes = []corev1.Volume{{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}}
}
func daemonSet(p *corev1.Pod) {
	p.OwnerReferences = []metav1.OwnerReference{{Kind: "DaemonSet", Name: "ds", Controller: ptr.To(true)}}
}

// NodeWright v0.20's order: what stays, what is waited for, what blocks
// under each drainConfig setting, what goes.
func TestDecideFollowsNodeWrightsOrder(t *testing.T) {
	now := metav1.Now()
	off := &skyhookv1.DrainConfig{Force: ptr.To(false), DeleteEmptyDirData: ptr.To(false), IgnoreDaemonSets: ptr.To(false)}
	training := labels.SelectorFromSet(labels.Set{"app": "training"})
	cases := []struct {
		name    string
		pod     *corev1.Pod
		opts    Options
		verdict Verdict
		reason  string
	}{
		{"succeeded", running("default", "done", func(p *corev1.Pod) { p.Status.Phase = corev1.PodSucceeded }), Options{}, Stay, ""},
		{"unknown phase", running("default", "lost", func(p *corev1.Pod) { p.Status.Phase = corev1.PodUnknown }), Options{}, Stay, ""},
		{"a stage pod", running("skyhook", "stage", func(p *corev1.Pod) { p.Labels = map[string]string{"nodewright.nvidia.com/name": "gpu"} }),
			Options{OperatorNamespace: "skyhook", StagePodLabels: []string{"nodewright.nvidia.com/name"}}, Stay, ""},
		{"a stage pod's label outside the namespace", running("default", "impostor", func(p *corev1.Pod) { p.Labels = map[string]string{"nodewright.nvidia.com/name": "gpu"} }),
			Options{OperatorNamespace: "skyhook", StagePodLabels: []string{"nodewright.nvidia.com/name"}}, Remove, ""},
		{"tolerates the cordon", running("default", "tolerant", func(p *corev1.Pod) {
			p.Spec.Tolerations = []corev1.Toleration{{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists}}
		}), Options{}, Stay, ""},
		{"DaemonSet pod", running("default", "ds", daemonSet), Options{}, Stay, ""},
		{"DaemonSet pod, ignoreDaemonSets false", running("default", "ds", daemonSet), Options{Config: off}, Remove, ""},
		{"kube-system", running("kube-system", "dns"), Options{}, Stay, ""},
		{"mirror pod", running("default", "static", func(p *corev1.Pod) { p.Annotations = map[string]string{MirrorPodAnnotation: "x"} }), Options{}, Stay, ""},
		{"terminating", running("default", "leaving", func(p *corev1.Pod) { p.DeletionTimestamp = &now }), Options{}, Wait, ""},
		{"non-interrupt", running("default", "train", func(p *corev1.Pod) { p.Labels = map[string]string{"app": "training"} }), Options{NonInterrupt: training}, Block, ReasonNonInterrupt},
		{"non-interrupt, interruptible now", running("default", "train", func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "training"}
			p.Annotations = map[string]string{"skyhook.nvidia.com/interruptible": "true"}
		}), Options{NonInterrupt: training}, Remove, ""},
		{"non-interrupt, NodeWright's annotation not true", running("default", "train", func(p *corev1.Pod) {
			p.Labels = map[string]string{"app": "training"}
			p.Annotations = map[string]string{"nodewright.nvidia.com/interruptible": "later"}
		}), Options{NonInterrupt: training}, Block, ReasonNonInterrupt},
		{"bare pod, force false, interruptible now", running("default", "bare", bare, func(p *corev1.Pod) {
			p.Annotations = map[string]string{"nodewright.nvidia.com/interruptible": "true"}
		}), Options{Config: off}, Remove, ""},
		{"bare pod", running("default", "bare", bare), Options{}, Remove, ""},
		{"bare pod, force false", running("default", "bare", bare), Options{Config: off}, Block, ReasonUnmanagedPod},
		{"emptyDir", running("default", "scratch", emptyDir), Options{}, Remove, ""},
		{"emptyDir, deleteEmptyDirData false", running("default", "scratch", emptyDir), Options{Config: off}, Block, ReasonEmptyDirData},
		{"emptyDir past a Delete timeout", running("default", "scratch", emptyDir), Options{Config: off, Force: true}, Remove, ""},
		{"managed pod", running("default", "web"), Options{Config: off}, Remove, ""},
	}
	for _, c := range cases {
		if v, reason := Decide(c.pod, c.opts); v != c.verdict || reason != c.reason {
			t.Errorf("%s: %v %q, want %v %q", c.name, v, reason, c.verdict, c.reason)
		}
	}
}

func TestGracePeriodRoundsUp(t *testing.T) {
	if g := gracePeriod(&skyhookv1.DrainConfig{GracePeriod: &metav1.Duration{Duration: 1500 * time.Millisecond}}); g == nil || *g != 2 {
		t.Errorf("1.5s: %v, want 2", g)
	}
	if g := gracePeriod(&skyhookv1.DrainConfig{}); g != nil {
		t.Errorf("unset: %d, want each pod's own", *g)
	}
}

// A budget's refusal is not asked again for 30 s, then is.
func TestThrottleForgetsAfterTheInterval(t *testing.T) {
	now := time.Unix(1000, 0)
	th := NewThrottle()
	th.now = func() time.Time { return now }
	if _, refused := th.Refused("p1"); refused {
		t.Fatal("refused before any refusal")
	}
	th.Note("p1", "the budget web needs 1 healthy pod")
	now = now.Add(29 * time.Second)
	if detail, refused := th.Refused("p1"); !refused || detail != "the budget web needs 1 healthy pod" {
		t.Errorf("29 s later: %q %v", detail, refused)
	}
	now = now.Add(time.Second)
	if _, refused := th.Refused("p1"); refused {
		t.Error("still refused after 30 s")
	}
	th.Note("p2", "x")
	if len(th.refused) != 1 {
		t.Errorf("old refusals kept: %v", th.refused)
	}
	var none *Throttle
	none.Note("p", "x")
	if _, refused := none.Refused("p"); refused {
		t.Error("a nil throttle remembered")
	}
}
