package stagepod

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// twoPackages is runSpec() (tuning, apply+config, 90 s a stage) followed
// by driver (apply+config, 60 s a stage, its own configMap).
func twoPackages() Spec {
	s := runSpec()
	next := runSpec()
	next.Package, next.Version, next.ConfigMap, next.Timeout = "driver", "2.0.0", "demo-driver", time.Minute
	next.Definition.ConfigMap = map[string]string{"a": "1"}
	s.Next = []Spec{next}
	s.Shape = NodeWright // the shape package runs were measured in (docs/rollout.md)
	return s
}

func exitedAt(name string, code int32, at time.Time) corev1.ContainerStatus {
	t := metav1.NewTime(at)
	return corev1.ContainerStatus{Name: name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, StartedAt: t, FinishedAt: t}}}
}

func containerNamesOf(pod *corev1.Pod) []string {
	var names []string
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	return names
}

func TestPodOfTwoPackagesRunsTheSecondAfterTheFirst(t *testing.T) {
	pod := Build(twoPackages())
	want := []string{"tuning-init", "tuning-apply", "tuning-applycheck", "tuning-config", "tuning-configcheck",
		"driver-init", "driver-apply", "driver-applycheck", "driver-config", "driver-configcheck"}
	if got := containerNamesOf(pod); !slices.Equal(got, want) {
		t.Fatalf("init containers %v, want %v", got, want)
	}
	if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != 300 {
		t.Errorf("deadline %v, want 300 s: tuning's 2 × 90 s and driver's 2 × 60 s", d)
	}
	if pod.Labels[PackageNameLabel] != "tuning" || pod.Labels[PackageLabel] != "tuning-1.1.0" {
		t.Errorf("labels %v: want the first package's, as a pod of it alone has them", pod.Labels)
	}
	var driverMount string
	for _, c := range pod.Spec.InitContainers {
		for _, m := range c.VolumeMounts {
			if c.Name == "driver-config" && m.MountPath == "/skyhook-package/configmaps" {
				driverMount = m.Name
			}
		}
	}
	var driverVolume string
	for _, v := range pod.Spec.Volumes {
		if v.ConfigMap != nil && v.ConfigMap.Name == "demo-driver" {
			driverVolume = v.Name
		}
	}
	if driverMount == "" || driverMount != driverVolume || driverMount == "configmap" {
		t.Errorf("driver's configMap: mounted from %q, volume %q; want its own volume", driverMount, driverVolume)
	}
	var env []string
	for _, e := range pod.Spec.InitContainers[6].Env {
		if e.Name == "SKYHOOK_PACKAGE" || e.Name == "SKYHOOK_VERSION" {
			env = append(env, e.Value)
		}
	}
	if !slices.Equal(env, []string{"driver", "2.0.0"}) {
		t.Errorf("driver-apply's package and version %v", env)
	}
}

func TestViewsReadEachPackageAsAPodOfItsOwn(t *testing.T) {
	pod := Build(twoPackages())
	created := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)
	pod.CreationTimestamp = metav1.NewTime(created)
	pod.Status.Phase = corev1.PodPending

	views := Views(pod)
	if len(views) != 2 || PackageOf(views[0]) != "tuning" || PackageOf(views[1]) != "driver" {
		t.Fatalf("views of packages %v", views)
	}
	driver := views[1]
	if driver.Annotations[VersionAnnotation] != "2.0.0" || driver.Labels[PackageLabel] != "driver-2.0.0" || driver.Annotations[ConfigHashAnnotation] != ConfigHash(map[string]string{"a": "1"}) {
		t.Errorf("driver's view: version %q, package label %q, config hash %q", driver.Annotations[VersionAnnotation], driver.Labels[PackageLabel], driver.Annotations[ConfigHashAnnotation])
	}
	if got := containerNamesOf(driver); len(got) != 5 || got[0] != "driver-init" {
		t.Errorf("driver's view holds %v", got)
	}
	if driver.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("driver, not started, has a deadline %d: its time would run while tuning's stages run", *driver.Spec.ActiveDeadlineSeconds)
	}
	if d := views[0].Spec.ActiveDeadlineSeconds; d == nil || *d != 180 {
		t.Errorf("tuning's deadline %v, want its own 180 s", d)
	}
	if Read(driver).Result != Running {
		t.Errorf("driver waiting: %v", Read(driver))
	}

	// tuning done, driver's apply running since 10 minutes in.
	start := created.Add(10 * time.Minute)
	for _, name := range []string{"tuning-init", "tuning-apply", "tuning-applycheck", "tuning-config", "tuning-configcheck"} {
		pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, exitedAt(name, 0, start))
	}
	pod.Status.InitContainerStatuses = append(pod.Status.InitContainerStatuses, exitedAt("driver-init", 0, start),
		corev1.ContainerStatus{Name: "driver-apply", State: corev1.ContainerState{Running: &corev1.ContainerStateRunning{StartedAt: metav1.NewTime(start)}}})
	pod.Status.Phase = corev1.PodPending
	views = Views(pod)
	if Read(views[0]).Result != Succeeded {
		t.Errorf("tuning, all its containers exited 0: %v", Read(views[0]))
	}
	driver = views[1]
	if Read(driver).Result != Running || ReadStage(driver, skyhookv1.StageApply).Result != Running {
		t.Errorf("driver running: %v", Read(driver))
	}
	if d, ok := Deadline(driver); !ok || !d.Equal(start.Add(120*time.Second)) {
		t.Errorf("driver's deadline %v (%v), want its start plus its own 2 × 60 s", d, ok)
	}

	// driver's apply fails: tuning stays done, driver failed.
	pod.Status.InitContainerStatuses[6] = exitedAt("driver-apply", 3, start.Add(time.Minute))
	pod.Status.Phase = corev1.PodFailed
	views = Views(pod)
	if Read(views[0]).Result != Succeeded {
		t.Errorf("tuning after driver failed the pod: %v", Read(views[0]))
	}
	if out := Read(views[1]); out.Result != Failed || out.Container != "driver-apply" || out.ExitCode != 3 {
		t.Errorf("driver: %+v", out)
	}
}

func TestAPackageThatNeverStartedInAnEndedPodHasNoView(t *testing.T) {
	pod := Build(twoPackages())
	pod.Status.Phase = corev1.PodFailed
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{exitedAt("tuning-init", 0, time.Now()), exitedAt("tuning-apply", 1, time.Now())}
	views := Views(pod)
	if len(views) != 1 || PackageOf(views[0]) != "tuning" || Read(views[0]).Result != Failed {
		t.Fatalf("views %d: want tuning's alone, failed", len(views))
	}
	if one := Build(spec()); len(Views(one)) != 1 || Views(one)[0] != one {
		t.Errorf("a pod of one package is its own view")
	}
}

// Whatever the annotation holds (a pod's annotations can be edited), Views
// gives at least one view and every view names a package.
func FuzzViews(f *testing.F) {
	f.Add(Build(twoPackages()).Annotations[RunPackagesAnnotation], "Failed")
	f.Add(`[{"package":"a","stages":[]},{"package":"b"}]`, "Running")
	f.Add(`[{"package":"","stages":["apply"]},{"package":"b","stages":["apply"]}]`, "Pending")
	f.Fuzz(func(t *testing.T, annotation, phase string) {
		pod := Build(twoPackages())
		pod.Annotations[RunPackagesAnnotation] = annotation
		pod.Status.Phase = corev1.PodPhase(phase)
		pod.Status.InitContainerStatuses = []corev1.ContainerStatus{exitedAt("tuning-init", 0, time.Now())}
		views := Views(pod)
		if len(views) == 0 {
			t.Fatal("no view")
		}
		for _, v := range views {
			if PackageOf(v) == "" || len(Stages(v)) == 0 {
				t.Fatalf("a view without a package or stages: %v", v.Labels)
			}
			_ = Read(v)
		}
	})
}
