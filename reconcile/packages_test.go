package reconcile

import (
	"slices"
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Unit tests of the package lifecycle on one node (packages.go); the
// cluster tests (skyhook_*_test.go) cover the same rules end to end.

func pkg(version string, dependsOn ...string) skyhookv1.Package {
	p := skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: version}, Image: "ghcr.io/x/pkg"}
	if len(dependsOn) > 0 {
		p.DependsOn = map[string]string{}
		for _, d := range dependsOn {
			p.DependsOn[d] = "1.0.0"
		}
	}
	return p
}

func skyhookWith(packages map[string]skyhookv1.Package) *skyhookv1.Skyhook {
	sk := &skyhookv1.Skyhook{}
	sk.Name = "sk"
	sk.Spec.Packages = packages
	return sk
}

func entry(name, version string, stage skyhookv1.Stage, state skyhookv1.State) skyhookv1.PackageStatus {
	return skyhookv1.PackageStatus{Name: name, Version: version, Image: "ghcr.io/x/pkg", Stage: stage, State: state}
}

func nodeStateOf(entries ...skyhookv1.PackageStatus) skyhookv1.NodeState {
	state := skyhookv1.NodeState{}
	for _, e := range entries {
		state[skyhookv1.NodeStateKey(e.Name, e.Version)] = e
	}
	return state
}

func TestDependencyOrderPutsDependenciesFirstThenNames(t *testing.T) {
	sk := skyhookWith(map[string]skyhookv1.Package{
		"app":    pkg("1.0.0", "tuning", "driver"),
		"driver": pkg("1.0.0", "kernel"),
		"kernel": pkg("1.0.0"),
		"tuning": pkg("1.0.0"),
		"zlast":  pkg("1.0.0"),
	})
	// "gone" was removed from the spec; the node still records it (an
	// uninstall is due), so it is in the order too.
	state := nodeStateOf(entry("gone", "0.1.0", skyhookv1.StagePostInterrupt, skyhookv1.StateComplete))
	got := dependencyOrder(sk, state)
	want := []string{"kernel", "driver", "tuning", "app", "gone", "zlast"}
	if !slices.Equal(got, want) {
		t.Fatalf("dependencyOrder = %v, want %v", got, want)
	}
	if names := packageNames(sk, state); !slices.Equal(names, []string{"app", "driver", "gone", "kernel", "tuning", "zlast"}) {
		t.Fatalf("packageNames = %v", names)
	}
}

func TestDependenciesDoneNeedsEveryDependency(t *testing.T) {
	sk := skyhookWith(map[string]skyhookv1.Package{"app": pkg("1.0.0", "a", "b"), "a": pkg("1.0.0"), "b": pkg("1.0.0")})
	if dependenciesDone(sk, "app", map[string]bool{"a": true, "b": false}) {
		t.Fatal("app may start with b not done")
	}
	if !dependenciesDone(sk, "app", map[string]bool{"a": true, "b": true}) {
		t.Fatal("app may not start with a and b done")
	}
	if !dependenciesDone(sk, "a", nil) {
		t.Fatal("a package without dependencies waits")
	}
}

func TestNextStepRunsTheInterruptTheRerunAsksFor(t *testing.T) {
	withInterrupt := pkg("1.0.0")
	withInterrupt.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}
	withInterrupt.ConfigMap = map[string]string{"a": "1"}
	sk := skyhookWith(map[string]skyhookv1.Package{"p": withInterrupt})
	state := nodeStateOf(entry("p", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete))

	// After an install's config stage, the package's own interrupt.
	config := map[string]string{"p": stagepod.ConfigHash(withInterrupt.ConfigMap)}
	if step := nextStep(sk, "p", state, config); step.Action != lifecycle.Run || step.Stage != skyhookv1.StageInterrupt {
		t.Fatalf("after config: %+v, want the interrupt", step)
	}
	// A rerun for a changed configMap whose keys ask for no interrupt
	// (empty marker) goes to post-interrupt without one.
	config[rerunKey("p")] = ""
	if step := nextStep(sk, "p", state, config); step.Stage == skyhookv1.StageInterrupt {
		t.Fatalf("rerun without a config interrupt: %+v, want no interrupt", step)
	}
	// Once the package is done, a configMap that changed since its config
	// stage ran reruns that stage.
	done := nodeStateOf(entry("p", "1.0.0", skyhookv1.StagePostInterrupt, skyhookv1.StateComplete))
	if step := nextStep(sk, "p", done, map[string]string{"p": stagepod.ConfigHash(withInterrupt.ConfigMap)}); step.Action != lifecycle.Done {
		t.Fatalf("done with the same configMap: %+v, want done", step)
	}
	config = map[string]string{"p": "an older hash"}
	if !configChanged(sk, "p", config) {
		t.Fatal("configChanged: false for a different hash")
	}
	if step := nextStep(sk, "p", done, config); step.Action != lifecycle.Run || step.Stage != skyhookv1.StageConfig {
		t.Fatalf("changed configMap: %+v, want config", step)
	}
	// No hash recorded (a node configured before hashes were kept) counts
	// as unchanged.
	if configChanged(sk, "p", map[string]string{}) {
		t.Fatal("configChanged: true without a recorded hash")
	}
}

func TestNodeStatusSummarisesTheRecord(t *testing.T) {
	sk := skyhookWith(map[string]skyhookv1.Package{"a": pkg("1.0.0"), "b": pkg("1.0.0")})
	done := func(name string) skyhookv1.PackageStatus {
		return entry(name, "1.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete)
	}
	for _, tc := range []struct {
		name  string
		state skyhookv1.NodeState
		want  skyhookv1.Status
	}{
		{"nothing recorded", nodeStateOf(), skyhookv1.StatusInProgress},
		{"one package done", nodeStateOf(done("a")), skyhookv1.StatusInProgress},
		{"a stage failed", nodeStateOf(done("a"), entry("b", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring)), skyhookv1.StatusErroring},
		{"every package done", nodeStateOf(done("a"), done("b")), skyhookv1.StatusComplete},
	} {
		if got := nodeStatus(sk, tc.state, map[string]string{}, nil); got != tc.want {
			t.Errorf("%s: nodeStatus = %s, want %s", tc.name, got, tc.want)
		}
		w := &nodeWork{state: tc.state, config: map[string]string{}}
		if complete := nodeComplete(sk, w); complete != (tc.want == skyhookv1.StatusComplete) {
			t.Errorf("%s: nodeComplete = %v", tc.name, complete)
		}
	}
}
