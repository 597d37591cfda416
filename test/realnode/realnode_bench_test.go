package realnode

import (
	"context"
	"fmt"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// BenchmarkInstallOnTheRealNode is the wall time from a Skyhook's create
// to the watch event of its status complete on the real kubelet: one package (apply and
// config), five independent ones, and five each depending on the one
// before (chain). It reports the seconds and the
// stage pods the install created. Run it with -benchtime 1x (an install
// takes seconds) and a -run that matches no test but is not '^$' (for
// which clustertest starts no cluster): go test ./test/realnode/ -run
// NONE -bench RealNode -benchtime 1x -count 3 (docs/rollout.md).
func BenchmarkInstallOnTheRealNode(b *testing.B) {
	needRealNode(b)
	if env == nil {
		b.Fatal("no cluster: clustertest starts none for -run '^$'; run with -run NONE")
	}
	for _, shape := range []struct {
		n     int
		chain bool
	}{{1, false}, {5, false}, {5, true}} {
		n := shape.n
		label := fmt.Sprintf("packages=%d", n)
		if shape.chain {
			label += ",chain"
		}
		b.Run(label, func(b *testing.B) {
			names := make([]string, n)
			images := map[string]string{}
			for i := range names {
				names[i] = fmt.Sprintf("mark-%c", 'a'+i)
				images[names[i]] = markPackage(b, names[i])
			}
			b.ResetTimer()
			for i := range b.N {
				name := fmt.Sprintf("bench-%d-%d-%d", n, i, time.Now().UnixNano()%100000)
				outDir(b, name)
				packages := map[string]skyhookv1.Package{}
				for j, p := range names {
					packages[p] = markedPackage(p, images[p])
					if shape.chain && j > 0 {
						dependent := packages[p]
						dependent.DependsOn = map[string]string{names[j-1]: "1.0.0"}
						packages[p] = dependent
					}
				}
				pods := stagePodsCreated(b, name)
				seen := stagePodsSeen(b, name)
				completeAt := skyhookCompleteAt(b, name)
				start := time.Now()
				create(b, onRealNode(name, packages))
				waitSkyhook(b, name, skyhookv1.StatusComplete, 5*time.Minute)
				b.ReportMetric(completeAt().Sub(start).Seconds(), "s/install")
				b.ReportMetric(float64(len(pods())), "stagepods/install")
				running, between := initContainerSeconds(seen())
				b.ReportMetric(running, "s/container-running")
				b.ReportMetric(between, "s/between-containers")
			}
		})
	}
}

// skyhookCompleteAt watches the Skyhook from now on and gives the time
// its status was first seen complete: when the watch event arrived, not
// when a poll (every half second) next looked.
func skyhookCompleteAt(t testing.TB, name string) func() time.Time {
	t.Helper()
	w, err := testenv.Client(t, env).Watch(context.Background(), &skyhookv1.SkyhookList{}, client.MatchingFields{"metadata.name": name})
	if err != nil {
		t.Fatal(err)
	}
	seen := testenv.Collect(t, w, func(ev watch.Event) []time.Time {
		if sk, ok := ev.Object.(*skyhookv1.Skyhook); ok && sk.Status.Status == skyhookv1.StatusComplete {
			return []time.Time{time.Now()}
		}
		return nil
	})
	return func() time.Time {
		for range 100 { // the poll that saw it complete may be ahead of the watch
			if at := seen(); len(at) > 0 {
				return at[0]
			}
			time.Sleep(10 * time.Millisecond)
		}
		t.Fatalf("the watch never saw Skyhook %s complete", name)
		return time.Time{}
	}
}

// stagePodsSeen follows the stage pods of the Skyhook from now on: each
// pod as it was last seen.
func stagePodsSeen(t testing.TB, skyhook string) func() []*corev1.Pod {
	t.Helper()
	all := watchStagePods(t, skyhook, func(watch.EventType) bool { return true })
	return func() []*corev1.Pod {
		last := map[string]*corev1.Pod{}
		var order []string
		for _, pod := range all() {
			if last[pod.Name] == nil {
				order = append(order, pod.Name)
			}
			last[pod.Name] = pod
		}
		out := make([]*corev1.Pod, len(order))
		for i, name := range order {
			out[i] = last[name]
		}
		return out
	}
}

// initContainerSeconds are, over the pods' init containers, the mean time
// one ran (start to end) and the mean time from one's end to the next
// one's start in its pod, as the kubelet reports them (to the second).
func initContainerSeconds(pods []*corev1.Pod) (running, between float64) {
	var runs, gaps []float64
	for _, pod := range pods {
		var lastEnd time.Time
		for _, s := range pod.Status.InitContainerStatuses {
			t := s.State.Terminated
			if t == nil {
				continue
			}
			runs = append(runs, t.FinishedAt.Sub(t.StartedAt.Time).Seconds())
			if !lastEnd.IsZero() {
				gaps = append(gaps, t.StartedAt.Sub(lastEnd).Seconds())
			}
			lastEnd = t.FinishedAt.Time
		}
	}
	return mean(runs), mean(gaps)
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	return sum / float64(len(xs))
}

// markPackage pushes a package whose apply appends its name to
// $OUT/order and whose config copies its configMap's mark.txt to
// $OUT/<name>.txt; it returns the image.
func markPackage(t testing.TB, name string) string {
	t.Helper()
	return pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply":        {nodeimages.Step("order", `echo "$SKYHOOK_PACKAGE" >> "$OUT/order"`)},
		"apply-check":  {nodeimages.Step("ordered", `grep -qx "$SKYHOOK_PACKAGE" "$OUT/order"`)},
		"config":       {nodeimages.Step("mark", `cp configmaps/mark.txt "$OUT/$SKYHOOK_PACKAGE.txt"`)},
		"config-check": {nodeimages.Step("marked", `test -s "$OUT/$SKYHOOK_PACKAGE.txt"`)},
	})
}

// markedPackage declares a markPackage with a configMap of its own.
func markedPackage(name, image string) skyhookv1.Package {
	return skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: name, Version: "1.0.0"}, Image: image,
		ConfigMap: map[string]string{"mark.txt": name + " configured\n"}}
}

// stagePodsCreated follows the stage pods created for the Skyhook from
// now on.
func stagePodsCreated(t testing.TB, skyhook string) func() []*corev1.Pod {
	t.Helper()
	return watchStagePods(t, skyhook, func(e watch.EventType) bool { return e == watch.Added })
}

// watchStagePods collects the Skyhook's stage pods from now on, as the
// events of the types it keeps carry them.
func watchStagePods(t testing.TB, skyhook string, keep func(watch.EventType) bool) func() []*corev1.Pod {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel + "=" + skyhook})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Collect(t, w, func(ev watch.Event) []*corev1.Pod {
		if pod, ok := ev.Object.(*corev1.Pod); ok && keep(ev.Type) {
			return []*corev1.Pod{pod}
		}
		return nil
	})
}
