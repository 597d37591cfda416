package stagepod

import (
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// podOfTwoPackages is a pod of two packages as the last operator that
// made them (commit 0d1ca9c, --package-runs) built it, in the NodeWright
// shape: tuning (apply+config, 90 s a stage), then driver (apply+config,
// 60 s a stage, its own configMap). This operator only reads such pods.
func podOfTwoPackages(t testing.TB) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("testdata/pod-of-two-packages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		t.Fatal(err)
	}
	return &pod
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

func TestViewsReadEachPackageAsAPodOfItsOwn(t *testing.T) {
	pod := podOfTwoPackages(t)
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
	pod := podOfTwoPackages(t)
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
	f.Add(podOfTwoPackages(f).Annotations[RunPackagesAnnotation], "Failed")
	f.Add(`[{"package":"a","stages":[]},{"package":"b"}]`, "Running")
	f.Add(`[{"package":"","stages":["apply"]},{"package":"b","stages":["apply"]}]`, "Pending")
	legacy := podOfTwoPackages(f)
	f.Fuzz(func(t *testing.T, annotation, phase string) {
		pod := legacy.DeepCopy()
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
