package stagepod

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Where image volumes are supported, a compact pod mounts the package
// image in each stage container and has no copy container: an apply +
// config run is two containers. The NodeWright shape keeps <pkg>-init.
func TestImageVolumeFoldsTheCopyIntoTheStageContainers(t *testing.T) {
	s := runSpec()
	s.ImageVolume = true
	pod := Build(s)
	names := containerNamesOf(pod)
	if want := []string{"tuning-apply", "tuning-config"}; !slices.Equal(names, want) {
		t.Fatalf("init containers %v, want %v", names, want)
	}
	var image *corev1.ImageVolumeSource
	for _, v := range pod.Spec.Volumes {
		if v.Name == "package" {
			image = v.Image
		}
	}
	if image == nil || image.Reference != "ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0" {
		t.Fatalf("package volume %+v; want an image volume of the package image at its version", image)
	}
	for _, c := range pod.Spec.InitContainers {
		if !slices.Contains(c.VolumeMounts, corev1.VolumeMount{Name: "package", MountPath: PackageMount, ReadOnly: true}) {
			t.Errorf("%s mounts %v; want the package image read-only at %s", c.Name, c.VolumeMounts, PackageMount)
		}
		if !slices.Contains(c.Env, corev1.EnvVar{Name: "SKYHOOK_PACKAGE_SOURCE", Value: PackageMount + "/skyhook-package"}) {
			t.Errorf("%s env %v; want SKYHOOK_PACKAGE_SOURCE", c.Name, c.Env)
		}
	}

	s.Shape = NodeWright
	pod = Build(s)
	if first := pod.Spec.InitContainers[0].Name; first != "tuning-init" {
		t.Errorf("NodeWright shape's first container %s, want its copy container tuning-init", first)
	}
	for _, v := range pod.Spec.Volumes {
		if v.Image != nil {
			t.Errorf("NodeWright shape mounts the image %+v; its copy container copies it", v)
		}
	}
}

// Without a copy container, the first stage of a run starts with its own
// container.
func TestStageStartWithoutACopyContainer(t *testing.T) {
	s := runSpec()
	s.ImageVolume = true
	pod := Build(s)
	if _, started := StageStart(pod, "apply"); started {
		t.Fatal("apply started before any container did")
	}
	applied := metav1.NewTime(time.Date(2026, 12, 7, 10, 0, 0, 0, time.UTC))
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{
		{Name: "tuning-apply", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: applied}}},
	}
	if at, started := StageStart(pod, "apply"); !started || !at.Equal(applied.Time) {
		t.Errorf("apply's start %v, %v; want %v, from its own container", at, started, applied)
	}
}
