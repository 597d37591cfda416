package reconcile

import (
	"context"
	"maps"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Package runs (SkyhookReconciler.PackageRuns): the installs and
// upgrades a node's turn starts go in one pod, one package after another
// in dependency order, and so do the packages those let start with no
// interrupt between (dependents whose dependencies are done by the end of
// the pod). The pod is read per package (stagepod.Views): each package's
// stages are recorded as they end, a failure stops the pod and the
// packages after it never start (they start again once they may, in a
// pod of their own), and the pod goes once every package in it is
// recorded (wholePods).

// joinsRun reports whether the step starts in the turn's pod of several
// packages: installs and upgrades, with their config (runAfter).
func (n *nodePass) joinsRun(step lifecycle.Step) bool {
	if n.r.PodPerStage || !n.r.PackageRuns {
		return false
	}
	return step.Stage == skyhookv1.StageApply || step.Stage == skyhookv1.StageUpgrade
}

// joinRun adds the step to the pod the turn is assembling.
func (n *nodePass) joinRun(name string, step lifecycle.Step, attempt int32) {
	n.run = append(n.run, n.stageSpec(name, step, attempt))
}

// extendRun adds to the turn's pod the packages it lets start: not
// advanced in this turn (seen), their dependencies done or completed by
// the packages before them in the pod with no interrupt to follow, next to
// install or upgrade, with no stage pod of their own and no drain first.
// Their entries are recorded when a turn reads their stages running.
func (n *nodePass) extendRun(done, seen map[string]bool) {
	if len(n.run) == 0 || !n.start {
		return
	}
	state, config := maps.Clone(n.state), maps.Clone(n.config)
	complete := maps.Clone(done)
	for _, spec := range n.run {
		complete[spec.Package] = completesRun(n.sk, spec, state, config)
	}
	for _, name := range dependencyOrder(n.sk, n.state) {
		if seen[name] || !dependenciesDone(n.sk, name, complete) || n.work.hasPodsOf(name) {
			continue
		}
		step := nextStep(n.sk, name, state, config)
		if step.Action != lifecycle.Run || !n.joinsRun(step) || drainsFirst(declared(n.sk, name), step) {
			continue
		}
		n.joinRun(name, step, 0)
		complete[name] = completesRun(n.sk, n.run[len(n.run)-1], state, config)
	}
}

// completesRun records in state and config the package of the spec as its
// stages in the pod leave it (complete at its last, with the pod's
// configMap), and reports whether that is the package done: nothing, no
// interrupt, follows.
func completesRun(sk *skyhookv1.Skyhook, spec stagepod.Spec, state skyhookv1.NodeState, config map[string]string) bool {
	installBegins(state, config, spec.Package, lifecycle.Step{Version: spec.Version, Stage: spec.Stage})
	stages := spec.Stages()
	state[skyhookv1.NodeStateKey(spec.Package, spec.Version)] = skyhookv1.PackageStatus{Name: spec.Package, Version: spec.Version, Image: spec.Image,
		Stage: stages[len(stages)-1], State: skyhookv1.StateComplete}
	config[spec.Package] = stagepod.ConfigHash(spec.Definition.ConfigMap)
	return nextStep(sk, spec.Package, state, config).Action == lifecycle.Done
}

// createRun creates the turn's pod of several packages, if it has one.
func (n *nodePass) createRun(ctx context.Context) error {
	if len(n.run) == 0 {
		return nil
	}
	spec := n.run[0]
	spec.Next, n.run = n.run[1:], nil
	return n.createPod(ctx, spec)
}
