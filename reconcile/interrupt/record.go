package interrupt

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Phase is where a node's interrupt stands.
type Phase string

// The phases of the interrupt path, in order.
const (
	// PhaseDrain: cordoned; waiting for pods matching podNonInterruptLabels,
	// then evicting.
	PhaseDrain Phase = "drain"
	// PhaseInterrupt: drained; the interrupt pod runs.
	PhaseInterrupt Phase = "interrupt"
	// PhaseVerify: the reboot was issued; waiting for the node to come back
	// Ready with a new bootID.
	PhaseVerify Phase = "verify"
	// PhaseSkipped: the drain timed out and the Skyhook's drain options say
	// to give the node up for this generation.
	PhaseSkipped Phase = "skipped"
	// PhaseDrained: cordoned and drained before the apply, upgrade or
	// uninstall of a package that will interrupt (NodeWright's order); the
	// node stays cordoned until its interrupt.
	PhaseDrained Phase = "drained"
	// PhaseDrainTimedOut: the drain outlived drainConfig.timeout
	// (NodeWright's): the node is erroring and stays cordoned; nothing more
	// is evicted until a reset or a new generation.
	PhaseDrainTimedOut Phase = "drain-timed-out"
	// PhaseYielded: the drain outlived drain.timeout held by workloads
	// (podNonInterruptLabels, a PodDisruptionBudget) and drain.onTimeout
	// is Yield: the node gave its budget slot back and waits to be tried
	// again (Since is when it yielded, WaitingSince when its wait began).
	PhaseYielded Phase = "yielded"
)

// Record is a node's interrupt in progress for one Skyhook, kept on the
// node (skyhookv1.InterruptAnnotation) so an operator restarted mid-way
// picks it up where it was and never repeats a reboot.
type Record struct {
	Generation int64     `json:"generation"`
	Phase      Phase     `json:"phase"`
	Since      time.Time `json:"since"`
	// Packages are the NodeStateKeys the merged interrupt is for.
	Packages  []string            `json:"packages"`
	Interrupt skyhookv1.Interrupt `json:"interrupt"`
	// BootID is the node's boot ID before the interrupt ran.
	BootID string `json:"bootID,omitempty"`
	// HeldReported: an event named the pods matching
	// podNonInterruptLabels that hold this drain.
	HeldReported bool `json:"heldReported,omitempty"`
	// LimitReported: an event said the interrupt failed its last try.
	LimitReported bool `json:"limitReported,omitempty"`
	// WaitingSince is when the node began to wait for workloads it yielded
	// to (drain.onTimeout Yield), kept across its tries; Yields counts
	// them. A node tried again after a yield yields again at once if the
	// workloads still hold it.
	WaitingSince time.Time `json:"waitingSince,omitzero"`
	Yields       int       `json:"yields,omitempty"`
}

// Yielded reports whether the record is a node that gave its slot back to
// workloads, in this generation.
func (r *Record) Yielded(generation int64) bool {
	return r != nil && r.Phase == PhaseYielded && r.Generation == generation
}

// For reports whether the record is the interrupt of these packages in
// this generation.
func (r *Record) For(generation int64, packages []string) bool {
	return r != nil && r.Generation == generation && slices.Equal(r.Packages, packages)
}

// Known reports whether p is one of the phases above.
func (p Phase) Known() bool {
	switch p {
	case PhaseDrain, PhaseInterrupt, PhaseVerify, PhaseSkipped, PhaseDrained, PhaseDrainTimedOut, PhaseYielded:
		return true
	}
	return false
}

// Read returns the node's interrupt record for the rollout, nil when there
// is none (or it cannot be read, or names no phase this operator knows:
// the interrupt path then starts over, which the agent's run-once record
// keeps from repeating an interrupt; a record of an unknown phase kept
// would hold the node in no step at all).
func Read(node *corev1.Node, rollout skyhookv1.RolloutRef) *Record {
	raw, ok := node.Annotations[rollout.InterruptAnnotation()]
	if !ok {
		return nil
	}
	var r Record
	if err := json.Unmarshal([]byte(raw), &r); err != nil || !r.Phase.Known() {
		return nil
	}
	// A time Go reads but cannot write back (an offset such as -24:59, or
	// a year past 9999 once in UTC) would make every later write of the
	// record fail: it is no record this operator wrote.
	r.Since, r.WaitingSince = r.Since.UTC(), r.WaitingSince.UTC()
	if _, err := r.Since.MarshalJSON(); err != nil {
		return nil
	}
	if _, err := r.WaitingSince.MarshalJSON(); err != nil {
		return nil
	}
	return &r
}

// Problem describes the node's interrupt annotation for the rollout when
// it is there and Read takes it for none (someone else wrote it); empty
// otherwise.
func Problem(node *corev1.Node, rollout skyhookv1.RolloutRef) string {
	raw, ok := node.Annotations[rollout.InterruptAnnotation()]
	if !ok || Read(node, rollout) != nil {
		return ""
	}
	if len(raw) > 64 {
		raw = fmt.Sprintf("%q... (%d bytes)", raw[:64], len(raw))
	} else {
		raw = fmt.Sprintf("%q", raw)
	}
	return fmt.Sprintf("annotation %s holds %s, not an interrupt record this operator can read (an unknown phase, or a time it cannot write back); read as none (the interrupt, if one is due, starts over)",
		rollout.InterruptAnnotation(), raw)
}

// Encode is the annotation value of a record; empty for nil.
func Encode(r *Record) (string, error) {
	if r == nil {
		return "", nil
	}
	b, err := json.Marshal(r)
	return string(b), err
}
