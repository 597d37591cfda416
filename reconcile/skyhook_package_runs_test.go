package reconcile_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Three packages due on a node at once (base; extra; tool, which depends
// on base) run in one pod, in dependency order, each package's install and
// config recorded as it ends: tool's entry appears only once base is
// complete. For either kind: the one engine builds and reads the pod.
func TestPackagesDueTogetherRunInOnePod(t *testing.T) {
	withPackageRuns(t)
	eachKind(t, func(t *testing.T, k kindCase) {
		created, history := packageRunRollout(t, k, "pkgrun", nil)
		k.wait(t, "pkgrun", time.Minute, isReady)
		if got := podPackages(created()); !slices.Equal(got, []string{"base,extra,tool"}) {
			t.Fatalf("stage pods hold %v, want one pod for base, extra, then tool (after its dependency)", got)
		}
		checkDependentAfterDependency(t, history(), "tool", "base")
		for _, name := range []string{"base", "extra", "tool"} {
			if e := packageEntryOf(t, k.name("pkgrun")+"-0", k.ref("pkgrun"), name, "1.0.0"); e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete {
				t.Errorf("%s ends at %s %s, want config complete", name, e.Stage, e.State)
			}
		}
	})
}

// A dependency failing in a pod it shares with its dependent stops the pod
// before the dependent starts: the dependent is never recorded until its
// dependency is complete, the dependency's retry runs alone, and the
// dependent then runs in a pod of its own.
func TestDependencyFailingInARunNeverStartsItsDependent(t *testing.T) {
	withPackageRuns(t)
	created, history := packageRunRollout(t, kindCase{rollouts.Skyhooks, ""}, "pkgfail", []corev1.EnvVar{
		{Name: simnode.ExitCodeEnv, Value: "3"}, {Name: simnode.ExitContainersEnv, Value: "base-apply"}})
	eventually(t, "base's retry", func() bool { return len(created()) >= 2 })
	if e := packageEntry(t, "pkgfail-0", "pkgfail", "base", "1.0.0"); e.State != skyhookv1.StateErroring && e.State != skyhookv1.StateInProgress {
		t.Errorf("base after its apply failed: %s %s", e.Stage, e.State)
	}
	kindCase{rollouts.Skyhooks, ""}.edit(t, "pkgfail", func(spec *skyhookv1.SkyhookSpec) {
		a := spec.Packages["base"]
		a.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "300ms"}}
		spec.Packages["base"] = a
	})
	waitSkyhook(t, "pkgfail", time.Minute, isReady)
	checkDependentAfterDependency(t, history(), "tool", "base")
	got := podPackages(created())
	if got[0] != "base,extra,tool" || got[len(got)-1] != "tool" || slices.Contains(got[1:len(got)-1], "tool") {
		t.Errorf("stage pods hold %v: want the run, base's tries, then tool alone", got)
	}
}

// The run's pod deleted while extra runs in it (base recorded complete):
// extra runs again, in a pod with tool (its dependency done, due too);
// base never again.
func TestPackageRunPodDeletedMidRunRerunsOnlyWhatWasNotDone(t *testing.T) {
	withPackageRuns(t)
	created, _ := packageRunRollout(t, kindCase{rollouts.Skyhooks, ""}, "pkgdel", nil)
	ctx := context.Background()
	eventually(t, "base complete, extra running", func() bool {
		a := packageEntry(t, "pkgdel-0", "pkgdel", "base", "1.0.0")
		c := packageEntry(t, "pkgdel-0", "pkgdel", "extra", "1.0.0")
		return a.Stage == skyhookv1.StageConfig && a.State == skyhookv1.StateComplete && c.State == skyhookv1.StateInProgress
	})
	run := created()[0]
	if err := k8sClient(t).Delete(ctx, run, client.Preconditions{UID: &run.UID}); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "pkgdel", time.Minute, isReady)
	if got := podPackages(created()); !slices.Equal(got, []string{"base,extra,tool", "extra,tool"}) {
		t.Errorf("stage pods hold %v, want the run, then b and c (b now due, its dependency done)", got)
	}
}

// The operator stopped while the run's second package (extra) runs: the new one
// follows the same pod to its end.
func TestPackageRunSurvivesAnOperatorRestart(t *testing.T) {
	withPackageRuns(t)
	created, history := packageRunRollout(t, kindCase{rollouts.Skyhooks, ""}, "pkgrestart", nil)
	eventually(t, "extra running in the run", func() bool {
		return packageEntry(t, "pkgrestart-0", "pkgrestart", "extra", "1.0.0").State == skyhookv1.StateInProgress
	})
	restartOperator(t, func(o *operator.Options) { o.PackageRuns = true })
	waitSkyhook(t, "pkgrestart", time.Minute, isReady)
	if got := podPackages(created()); !slices.Equal(got, []string{"base,extra,tool"}) {
		t.Errorf("stage pods hold %v, want the one run", got)
	}
	checkDependentAfterDependency(t, history(), "tool", "base")
}

// Without --package-runs each package has pods of its own.
func TestWithoutPackageRunsPackagesRunApart(t *testing.T) {
	created, _ := packageRunRollout(t, kindCase{rollouts.Skyhooks, ""}, "pkgapart", nil)
	waitSkyhook(t, "pkgapart", time.Minute, isReady)
	got := podPackages(created())
	slices.Sort(got)
	if !slices.Equal(got, []string{"base", "extra", "tool"}) {
		t.Errorf("stage pods hold %v, want a pod for each package", got)
	}
}

// withPackageRuns restarts the operator with --package-runs for the test.
func withPackageRuns(t *testing.T) {
	t.Helper()
	restartOperator(t, func(o *operator.Options) { o.PackageRuns = true })
}

// packageRunRollout rolls a rollout of the kind, base as the kind names it
// (k.name), of three packages onto one node <name>-0: base (its env
// added), tool depending on base, and extra; each stage takes 300 ms, 1 s
// for extra.
func packageRunRollout(t *testing.T, k kindCase, base string, envOfA []corev1.EnvVar) (func() []*corev1.Pod, func() []skyhookv1.NodeState) {
	t.Helper()
	name := k.name(base)
	createNodes(t, simnode.Numbered(name, 1, map[string]string{"pool": name})...)
	created := stagePodsCreatedOf(t, k.ref(base))
	history := recordHistoryOf(t, name+"-0", k.ref(base))
	a := pkg("1.0.0", "ghcr.io/x/base", nil)
	a.Env = append(a.Env, envOfA...)
	c := pkg("1.0.0", "ghcr.io/x/extra", nil)
	c.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1s"}}
	k.create(t, base, skyhookv1.SkyhookSpec{
		NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": name}},
		Packages:     skyhookv1.Packages{"base": a, "tool": pkg("1.0.0", "ghcr.io/x/tool", map[string]string{"base": "1.0.0"}), "extra": c},
	})
	return created, history
}

// checkDependentAfterDependency fails the test if a version of the record
// has an entry of dependent while dependency is not complete.
func checkDependentAfterDependency(t *testing.T, history []skyhookv1.NodeState, dependent, dependency string) {
	t.Helper()
	if len(history) == 0 {
		t.Fatal("no record of the rollout was seen on the node")
	}
	for i, state := range history {
		dep, recorded := state[dependent+"|1.0.0"]
		if !recorded {
			continue
		}
		if e := state[dependency+"|1.0.0"]; e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete {
			t.Errorf("record %d has %s %s %s while %s is %s %s", i+1, dependent, dep.Stage, dep.State, dependency, e.Stage, e.State)
		}
	}
}

// podPackages are the packages each pod holds, comma separated, in order.
func podPackages(pods []*corev1.Pod) []string {
	var out []string
	for _, pod := range pods {
		var names []string
		for _, view := range stagepod.Views(pod) {
			names = append(names, stagepod.PackageOf(view))
		}
		out = append(out, strings.Join(names, ","))
	}
	return out
}
