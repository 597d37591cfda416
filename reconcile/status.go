package reconcile

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/fluxcd/pkg/runtime/patch"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/drain"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Everything the operator writes to a Skyhook's status, and the events it
// emits about it, is written here: a pass collects what it found in a
// progress, and summarise turns that into the status and Flux conditions;
// finalizeStatus, deferred by Reconcile, patches it.

var ownedConditions = append([]string{meta.ReadyCondition, meta.ReconcilingCondition, meta.StalledCondition,
	skyhookv1.NodesBlockedCondition, skyhookv1.RolloutHaltedCondition, skyhookv1.DrainBlockedCondition,
	skyhookv1.InterruptWindowClosedCondition, skyhookv1.UninstallInProgressCondition, skyhookv1.UninstallFailedCondition,
	skyhookv1.BlockedCondition, skyhookv1.DeletionBlockedCondition}, upstreamConditionTypes...)

const fieldOwner = "skyhook-operator"

// finalizeStatus ends every reconcile, as Flux's controllers do: it records
// the handled reconcile request, announces a changed summary, and patches
// the status, unless only progress counters moved since a write less than
// statusInterval ago: then it returns how long the write waits.
func (r *SkyhookReconciler) finalizeStatus(ctx context.Context, patcher *patch.SerialPatcher, before, sk *skyhookv1.Skyhook) (time.Duration, error) {
	if v, ok := meta.ReconcileAnnotationValue(sk.GetAnnotations()); ok {
		sk.Status.SetLastHandledReconcileRequest(v) // reconcile.fluxcd.io/requestedAt, as Flux's kinds do
	}
	r.announce(before, sk)
	if wait, hold := r.statusWrites.hold(before, sk); hold {
		sk.Status = before.Status // nothing to write now; the requeue will
		return wait, nil
	}
	opts := []patch.Option{patch.WithOwnedConditions{Conditions: ownedConditions}, patch.WithFieldOwner(fieldOwner)}
	if err := patcher.Patch(ctx, sk, opts...); err != nil && !apierrors.IsNotFound(err) {
		return 0, err
	}
	r.statusWrites.wrote(sk.UID)
	return 0, nil
}

// markDisabled is the status of a Skyhook with the disable annotation.
func markDisabled(sk *skyhookv1.Skyhook) {
	sk.Status.Status = skyhookv1.StatusDisabled
	conditions.Delete(sk, meta.ReconcilingCondition)
	conditions.MarkFalse(sk, meta.ReadyCondition, "Disabled", "the %s annotation is set", skyhookv1.DisableAnnotation)
	mirrorReady(sk)
}

// warningConditions are the conditions a Warning event of the same reason
// announces whenever they say something new while True, as NodeWright
// warns of them: a drain held, a deletion held (a paused or disabled
// Skyhook with uninstalls pending, or a record that cannot be read).
var warningConditions = []struct{ condition, action string }{
	{skyhookv1.DrainBlockedCondition, "Drain"},
	{skyhookv1.DeletionBlockedCondition, "Delete"},
}

// announce emits an event when the Skyhook's summary status changes: the
// rollout started, completed, a stage failed, it stalled; and a Warning
// when one of warningConditions says something new.
func (r *SkyhookReconciler) announce(before, after *skyhookv1.Skyhook) {
	for _, w := range warningConditions {
		msg := conditions.GetMessage(after, w.condition)
		if r.Recorder != nil && conditions.IsTrue(after, w.condition) && msg != conditions.GetMessage(before, w.condition) {
			r.Recorder.Eventf(after, nil, corev1.EventTypeWarning, w.condition, w.action, "%s", msg)
		}
	}
	if r.Recorder == nil || before.Status.Status == after.Status.Status || after.Status.Status == "" {
		return
	}
	kind, reason, note := corev1.EventTypeNormal, "Progressing", conditions.GetMessage(after, meta.ReadyCondition)
	switch after.Status.Status {
	case skyhookv1.StatusComplete:
		reason = "Complete"
	case skyhookv1.StatusErroring:
		kind, reason = corev1.EventTypeWarning, "StageFailed"
		if conditions.IsStalled(after) {
			reason, note = "Stalled", conditions.GetMessage(after, meta.StalledCondition)
		} else if len(after.Status.NodesNeedingAttention) > 0 {
			note = after.Status.NodesNeedingAttention[0].Name + ": " + after.Status.NodesNeedingAttention[0].Message
		}
	case skyhookv1.StatusPaused, skyhookv1.StatusDisabled:
		reason = string(after.Status.Status)
	}
	r.Recorder.Eventf(after, nil, kind, reason, "Rollout", "%s", note)
}

// progress is what a pass found, for the status. Each node's turn reports
// into a progress of its own, added to the pass's by the pool (add).
type progress struct {
	selected, complete, active int
	ignored                    int // selected but labelled to be ignored
	blockedNodes               int // selected, not ignored, and blocked
	// malformed are the selected nodes held because their record cannot
	// be read (also in blocked).
	malformed []skyhookv1.NodeAttention
	blocked   []skyhookv1.NodeAttention
	erroring  []skyhookv1.NodeAttention
	stalled   []string
	// drainBlocked are the nodes whose interrupt waits on pods.
	drainBlocked []drainReport
	// windowWaits counts the nodes waiting for the interrupt window to open
	// at nextWindow.
	windowWaits int
	nextWindow  time.Time
	halted      bool // a compartment halted and nothing runs
	// behind counts, per Skyhook that goes first, the nodes that wait for
	// it to finish there (priority).
	behind map[string]int
	// heldBy is a Skyhook that goes first with sequencing all and is not
	// complete everywhere: it holds every node of this one.
	heldBy  string
	requeue time.Duration
	// uninstalling and uninstallFailing count the nodes where a package is
	// in its uninstall (or uninstall interrupt), and where that fails.
	uninstalling, uninstallFailing int
	// untolerated names the nodes whose taints the Skyhook does not
	// tolerate.
	untolerated []string
	// applying says which package a stage pod was created for, and on which
	// node, in NodeWright's words (its ApplyPackage condition): the first
	// by node name.
	applying, applyingNode string
}

// applied notes a stage pod created for the package on the node.
func (p *progress) applied(pkg, version, node string) {
	p.noteApplying(fmt.Sprintf("Applying package [%s:%s] to node [%s]", pkg, version, node), node)
}

// noteApplying keeps the message of the first node by name.
func (p *progress) noteApplying(message, node string) {
	if node != "" && (p.applyingNode == "" || node < p.applyingNode) {
		p.applying, p.applyingNode = message, node
	}
}

// drainReport says what holds a node's interrupt.
type drainReport struct {
	node     string
	blockers []drain.Blocker
}

// requeueIn asks for the next pass in d at the latest.
func (p *progress) requeueIn(d time.Duration) { p.requeue = minPositive(p.requeue, d) }

func (p *progress) nodeBlocked(node, message string) {
	p.blocked = append(p.blocked, skyhookv1.NodeAttention{Name: node, Status: skyhookv1.StatusBlocked, Message: message})
}

func (p *progress) nodeErroring(node, message string) {
	p.erroring = append(p.erroring, skyhookv1.NodeAttention{Name: node, Status: skyhookv1.StatusErroring, Message: message})
}

// gaveUp names a stage (package on node) that failed MaxAttempts times.
func (p *progress) gaveUp(what string) { p.stalled = append(p.stalled, what) }

// drainWaits records what holds a node's drain.
func (p *progress) drainWaits(node string, blockers []drain.Blocker) {
	p.drainBlocked = append(p.drainBlocked, drainReport{node: node, blockers: blockers})
}

// nodeFinished moves a node that was in progress to complete.
func (p *progress) nodeFinished() {
	p.active--
	p.complete++
}

// waitsForWindow counts a node whose interrupt waits for the window that
// opens at next.
func (p *progress) waitsForWindow(next, now time.Time) {
	p.windowWaits++
	if p.nextWindow.IsZero() || next.Before(p.nextWindow) {
		p.nextWindow = next
	}
	p.requeueIn(next.Sub(now))
}

func (p *progress) waitBehind(first string) {
	if p.behind == nil {
		p.behind = map[string]int{}
	}
	p.behind[first]++
}

// add adds what one node's turn reported.
func (p *progress) add(local progress) {
	p.active += local.active
	p.complete += local.complete
	p.requeue = minPositive(p.requeue, local.requeue)
	p.noteApplying(local.applying, local.applyingNode)
	p.addLists(local)
}

// addLists adds what a node has for the status's lists and conditions.
func (p *progress) addLists(local progress) {
	p.malformed = append(p.malformed, local.malformed...)
	p.erroring = append(p.erroring, local.erroring...)
	p.stalled = append(p.stalled, local.stalled...)
	p.blocked = append(p.blocked, local.blocked...)
	p.drainBlocked = append(p.drainBlocked, local.drainBlocked...)
	p.untolerated = append(p.untolerated, local.untolerated...)
	p.windowWaits += local.windowWaits
	p.uninstalling += local.uninstalling
	p.uninstallFailing += local.uninstallFailing
	if !local.nextWindow.IsZero() && (p.nextWindow.IsZero() || local.nextWindow.Before(p.nextWindow)) {
		p.nextWindow = local.nextWindow
	}
}

// noteworthy reports whether a node's report has anything for the lists
// (see addLists).
func (p *progress) noteworthy() bool {
	return len(p.malformed)+len(p.erroring)+len(p.stalled)+len(p.blocked)+len(p.drainBlocked)+len(p.untolerated)+
		p.windowWaits+p.uninstalling+p.uninstallFailing > 0
}

// sortByNode puts the lists in a stable order: the status must not change
// with the order the nodes finished in.
func (p *progress) sortByNode() {
	sort.SliceStable(p.erroring, func(i, j int) bool { return p.erroring[i].Name < p.erroring[j].Name })
	sort.Strings(p.stalled)
	sort.SliceStable(p.blocked, func(i, j int) bool { return p.blocked[i].Name < p.blocked[j].Name })
	sort.Slice(p.drainBlocked, func(i, j int) bool { return p.drainBlocked[i].node < p.drainBlocked[j].node })
}

// behindSummary says which Skyhooks hold nodes back, so a rollout that
// does not move because another Skyhook is erroring says why.
func (p *progress) behindSummary() string {
	if len(p.behind) == 0 {
		return ""
	}
	var n int
	var names []string
	for _, name := range slices.Sorted(maps.Keys(p.behind)) {
		n += p.behind[name]
		names = append(names, fmt.Sprintf("%s (%d)", name, p.behind[name]))
	}
	return fmt.Sprintf(", %d waiting for Skyhooks that go first there: %s", n, strings.Join(names, ", "))
}

// reportPolicy writes the compartments' batch state and the RolloutHalted
// condition, with an event for each compartment that halted in this pass.
func (pass *rolloutPass) reportPolicy(o policyOutcome) {
	sk := pass.sk
	sk.Status.Compartments = o.compartments
	if len(o.halted) == 0 {
		conditions.Delete(sk, skyhookv1.RolloutHaltedCondition)
		return
	}
	conditions.MarkTrue(sk, skyhookv1.RolloutHaltedCondition, "FailureThresholdReached",
		"no new nodes start in compartment %v: the failureThreshold of policy %s was reached; change the Skyhook's spec to resume", o.halted, o.policy)
	for _, note := range o.haltedNow {
		if pass.r.Recorder != nil {
			pass.r.Recorder.Eventf(sk, nil, corev1.EventTypeWarning, "RolloutHalted", "Rollout", "%s", note)
		}
	}
}

// summarise writes the status, the Flux conditions and NodeWright's.
func (pass *rolloutPass) summarise(p progress) {
	pass.summariseFlux(p)
	mirrorReady(pass.sk)
	mirrorNodeConditions(pass.sk, p)
}

// summariseFlux writes the status and the Flux conditions; Ready's reason
// once complete is NodeWright's NodesConverged (Flux's tools read only its
// status), the others are Flux's.
func (pass *rolloutPass) summariseFlux(p progress) {
	sk := pass.sk
	s := &sk.Status
	s.CompleteNodes = fmt.Sprintf("%d/%d", p.complete, p.selected)
	s.NodesInProgress = p.active
	s.PackageList = packageList(sk)
	s.NodesNeedingAttention = append(append([]skyhookv1.NodeAttention{}, p.erroring...), p.blocked...)
	reportBlocked(sk, p.blocked)
	reportDrains(sk, p.drainBlocked)
	reportWindow(sk, p.windowWaits, p.nextWindow)
	reportUninstalls(sk, p.uninstalling, p.uninstallFailing)
	reportDependencies(sk)
	s.NodesNeedingAttention = firstPerNode(s.NodesNeedingAttention)
	if len(s.NodesNeedingAttention) > skyhookv1.MaxAttentionNodes {
		s.NodesNeedingAttention = s.NodesNeedingAttention[:skyhookv1.MaxAttentionNodes]
	}
	switch {
	case p.complete == p.selected:
		s.Status = skyhookv1.StatusComplete
		s.ObservedGeneration = sk.Generation
		conditions.Delete(sk, meta.ReconcilingCondition)
		conditions.Delete(sk, meta.StalledCondition)
		conditions.MarkTrue(sk, meta.ReadyCondition, skyhookv1.NodesConvergedReason, "Applied to %d/%d nodes", p.complete, p.selected)
		return
	case p.halted:
		// Nothing runs any more and the policy stopped new starts.
		markStalled(sk, "RolloutHalted", conditions.GetMessage(sk, skyhookv1.RolloutHaltedCondition))
		return
	case len(p.stalled) > 0:
		markStalled(sk, "StageFailed", fmt.Sprintf("gave up after %d attempts: %v", pass.r.MaxAttempts, p.stalled))
		return
	case pass.paused:
		s.Status = skyhookv1.StatusPaused
	case p.heldBy != "":
		s.Status = skyhookv1.StatusWaiting // as NodeWright says a Skyhook behind one with sequencing all
	case len(p.erroring) > 0:
		s.Status = skyhookv1.StatusErroring
	case p.active == 0 && p.blockedNodes > 0 && p.blockedNodes == p.selected-p.complete:
		s.Status = skyhookv1.StatusBlocked // every node left is blocked, as NodeWright says it
	default:
		s.Status = skyhookv1.StatusInProgress
	}
	conditions.Delete(sk, meta.StalledCondition)
	msg := fmt.Sprintf("%d/%d nodes complete, %d in progress%s", p.complete, p.selected, p.active, p.behindSummary())
	conditions.MarkReconciling(sk, meta.ProgressingReason, "%s", msg)
	conditions.MarkFalse(sk, meta.ReadyCondition, meta.ProgressingReason, "%s", msg)
}

// markStalled is the status of a rollout that cannot go on by itself.
func markStalled(sk *skyhookv1.Skyhook, reason, message string) {
	sk.Status.Status = skyhookv1.StatusErroring
	sk.Status.ObservedGeneration = sk.Generation
	conditions.Delete(sk, meta.ReconcilingCondition)
	conditions.MarkStalled(sk, reason, "%s", message)
	conditions.MarkFalse(sk, meta.ReadyCondition, reason, "%s", message)
}

// reportBlocked sets the NodesBlocked condition naming the first ten
// blocked nodes and why.
func reportBlocked(sk *skyhookv1.Skyhook, blocked []skyhookv1.NodeAttention) {
	if len(blocked) == 0 {
		conditions.Delete(sk, skyhookv1.NodesBlockedCondition)
		return
	}
	names := make([]string, 0, min(len(blocked), 10))
	for _, b := range blocked[:min(len(blocked), 10)] {
		names = append(names, b.Name+" ("+b.Message+")")
	}
	more := ""
	if len(blocked) > 10 {
		more = fmt.Sprintf(" and %d more", len(blocked)-10)
	}
	conditions.MarkTrue(sk, skyhookv1.NodesBlockedCondition, "NodesBlocked", "%d nodes blocked: %s%s", len(blocked), strings.Join(names, "; "), more)
}

// firstPerNode keeps the first entry of each node: the list is a map keyed
// by node name, and a node with two failing packages must not appear twice.
func firstPerNode(list []skyhookv1.NodeAttention) []skyhookv1.NodeAttention {
	seen := map[string]bool{}
	out := list[:0]
	for _, a := range list {
		if !seen[a.Name] {
			seen[a.Name] = true
			out = append(out, a)
		}
	}
	return out
}

// packageList is "name:version" of every package, sorted, comma separated.
func packageList(sk *skyhookv1.Skyhook) string {
	items := make([]string, 0, len(sk.Spec.Packages))
	for name, p := range sk.Spec.Packages {
		items = append(items, name+":"+p.Version)
	}
	sort.Strings(items)
	return strings.Join(items, ",")
}

// minPositive is the smaller of two waits, ignoring zero.
func minPositive(a, b time.Duration) time.Duration {
	if a <= 0 || (b > 0 && b < a) {
		return b
	}
	return a
}

// reportReplaced records a Normal event on the Skyhook for a stage pod
// deleted because it runs what the spec no longer declares.
func (r *SkyhookReconciler) reportReplaced(sk *skyhookv1.Skyhook, node string, pod *corev1.Pod) {
	r.Recorder.Eventf(sk, nil, corev1.EventTypeNormal, "StagePodReplaced", "Replace",
		"stage pod %s on node %s runs package %s %s as the spec no longer declares it; it is deleted and its stage starts again with the spec's",
		pod.Name, node, pod.Labels[stagepod.PackageLabel], pod.Annotations[stagepod.VersionAnnotation])
}
