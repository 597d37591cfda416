package reconcile_test

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// Whether a stage pod copies its package with a container is decided per
// node, by what its kubelet and runtime report (the apiserver here keeps
// image volumes): a node on containerd 2.x mounts the package image and
// runs apply and config in two containers; a node on containerd 1.7 gets
// the copy container first. Both nodes complete.
func TestStagePodMountsThePackageWhereTheNodeCan(t *testing.T) {
	const name = "imagevolume"
	labels := map[string]string{"pool": name}
	modern := simnode.Node{Name: name + "-modern", Labels: labels}
	older := simnode.Node{Name: name + "-older", Labels: labels, KubeletVersion: "v1.34.2", ContainerRuntime: "containerd://1.7.27"}
	createNodes(t, modern, older)
	created := stagePodsCreated(t, name)
	tuning := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	tuning.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "500ms"}}
	kindCase{rollouts.Skyhooks, ""}.create(t, name, skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: labels},
		Packages:     skyhookv1.Packages{"tuning": tuning},
	})
	waitSkyhook(t, name, time.Minute, isReady)
	want := map[string][]string{
		modern.Name: {"tuning-apply:apply,apply-check", "tuning-config:config,config-check"},
		older.Name:  {"tuning-init:", "tuning-apply:apply,apply-check", "tuning-config:config,config-check"},
	}
	pods := created()
	if len(pods) != 2 {
		t.Fatalf("%d stage pods, want one per node", len(pods))
	}
	for _, pod := range pods {
		if got := containersAndModes(pod); !slices.Equal(got, want[pod.Spec.NodeName]) {
			t.Errorf("%s: containers %v, want %v", pod.Spec.NodeName, got, want[pod.Spec.NodeName])
		}
		mounted := packageImageOf(pod)
		if wantMount := pod.Spec.NodeName == modern.Name; (mounted != "") != wantMount {
			t.Errorf("%s: package image volume %q; want one: %v", pod.Spec.NodeName, mounted, wantMount)
		}
		if mounted != "" && mounted != "ghcr.io/x/tuning:1.0.0" {
			t.Errorf("%s mounts %s, want the package image at its version", pod.Spec.NodeName, mounted)
		}
	}
}

// --image-volumes=off keeps the copy container on every node.
func TestImageVolumesOffKeepsTheCopyContainer(t *testing.T) {
	restartOperator(t, func(o *operator.Options) { o.NoImageVolumes = true })
	created, _ := stageRunRollout(t, "copyalways", nil)
	waitSkyhook(t, "copyalways", time.Minute, isReady)
	pods := created()
	if len(pods) != 1 {
		t.Fatalf("%d stage pods, want one for apply and config", len(pods))
	}
	want := []string{"tuning-init:", "tuning-apply:apply,apply-check", "tuning-config:config,config-check"}
	if got := containersAndModes(pods[0]); !slices.Equal(got, want) || packageImageOf(pods[0]) != "" {
		t.Errorf("containers %v (package image volume %q), want %v and no image volume", got, packageImageOf(pods[0]), want)
	}
}

// packageImageOf is the image the pod mounts for its package, "" for none.
func packageImageOf(pod *corev1.Pod) string {
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil {
			return v.Image.Reference
		}
	}
	return ""
}
