package reconcile

import (
	"context"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/interrupt"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
)

// Cordon and drain before the stage, NodeWright's order for a package that
// will interrupt: uninstall → cordon → wait → drain → apply/upgrade →
// config → interrupt → post-interrupt. A kernel module, a driver or a GPU
// mode is changed with no workload on the node, not only rebooted without
// one. The node's interrupt record carries the drain (phase drained), so
// an operator restarted meanwhile neither drains again nor lifts the
// cordon; the interrupt path takes the node over from there.

// drainsFirst reports whether the step must wait for the node to be
// cordoned and drained: the apply, upgrade or uninstall of a package with
// an interrupt.
func drainsFirst(d *skyhookv1.Package, step lifecycle.Step) bool {
	if d == nil || d.Interrupt == nil || step.Version != d.Version {
		return false
	}
	switch step.Stage {
	case skyhookv1.StageApply, skyhookv1.StageUpgrade, skyhookv1.StageUninstall:
		return true
	}
	return false
}

// drainFirst moves the node's drain before the stage one step and reports
// whether the stage may start now. The stage starts in the pass after the
// one that saw the node drained, once the record says so.
func (n *nodePass) drainFirst(ctx context.Context, name string, step lifecycle.Step) (bool, error) {
	sk := n.sk
	rec := n.early
	if rec == nil {
		rec = interrupt.Read(n.work.node, n.ref)
	}
	if rec != nil && rec.Generation == sk.Generation {
		switch rec.Phase {
		case interrupt.PhaseDrained:
			n.early = rec
			return true, nil
		case interrupt.PhaseSkipped:
			n.early = rec // drain.onTimeout Skip: the node is given up for this generation
			return false, nil
		case interrupt.PhaseDrainTimedOut:
			_, n.early, _ = n.drainStopped(rec) // drainConfig.timeout: erroring and cordoned until a reset
			return false, nil
		case interrupt.PhaseInterrupt, interrupt.PhaseVerify:
			return true, nil // an interrupt under way drained the node already
		case interrupt.PhaseYielded:
			rec = retryAfterYield(rec) // admitted again: a try
		}
	}
	if rec == nil || rec.Generation != sk.Generation || rec.Phase != interrupt.PhaseDrain {
		if n.windowClosed() { // draining disturbs as much as the interrupt
			return false, nil
		}
		// The record first, with the node's status in progress; the cordon
		// in the next pass: a node never shows complete and cordoned.
		n.early = &interrupt.Record{Generation: sk.Generation, Phase: interrupt.PhaseDrain, Since: time.Now().UTC(),
			Packages: []string{skyhookv1.NodeStateKey(name, step.Version)}, Interrupt: skyhookv1.Interrupt{Type: skyhookv1.InterruptNoop}}
		return false, nil
	}
	_, next, err := n.drainNode(ctx, rec)
	if err != nil {
		return false, err
	}
	if next.Phase == interrupt.PhaseInterrupt {
		next.Phase = interrupt.PhaseDrained
	}
	n.early = next
	return false, nil
}

// holdsDrain reports whether the node stays cordoned for a drain before
// apply: until its interrupt, or until it is complete. Also across a spec
// change: the package was applied on a drained node and its interrupt is
// still to come.
func (n *nodePass) holdsDrain(rec *interrupt.Record) bool {
	return rec != nil && rec.Phase == interrupt.PhaseDrained && nodeStatus(n.sk, n.state, n.config, n.retrying) != skyhookv1.StatusComplete
}
