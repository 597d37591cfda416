package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
)

// What the resets share (reset, node reset, deployment-policy reset): the
// plan of each node's reset, running it with its question and report, and
// the request that the operator start a rollout's batches over.

// batchReset sets the rollout's reset-batch-state annotation (the time of
// the request, under its kind's prefix); the operator starts what starts
// over, then removes it. A rollout with no object has nothing to start
// over: a warning.
func batchReset(cmd *cobra.Command, c client.Client, sk *skyhookv1.Skyhook, what string) func(...client.PatchOption) error {
	return func(opts ...client.PatchOption) error {
		annotation := skyhookv1.KindOf(sk).ResetBatchStateAnnotation()
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			annotation: time.Now().UTC().Format(time.RFC3339)}}})
		if err != nil {
			return err
		}
		if err := c.Patch(cmd.Context(), objectOf(sk), client.RawPatch(types.MergePatchType, patch), opts...); err != nil {
			return fmt.Errorf("requesting the batch state reset of %s %q: %w", kindOf(sk), sk.Name, err)
		}
		if len(opts) == 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "Batch state reset requested for %s %q: the operator starts %s over\n", kindOf(sk), sk.Name, what)
		}
		return nil
	}
}

// batchResetOf is batchReset of the scope's leader, or a warning when the
// rollout has no object, or could not be read.
func batchResetOf(cmd *cobra.Command, c client.Client, scope resetScope) func(...client.PatchOption) error {
	if scope.leader == nil {
		return func(...client.PatchOption) error {
			why := "not found"
			if scope.unreadable != nil {
				why = "could not be read"
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "Warning: NodeWright or Skyhook %q %s: no batch state reset\n", scope.name, why)
			return nil
		}
	}
	return batchReset(cmd, c, scope.leader, "its batches and node order")
}

// resetScope is the rollout a reset is of, as far as it could be read.
type resetScope struct {
	*rollout
	// unreadable is why the rollout could not be read: its cordons are
	// then kept, as it may still rerun there.
	unreadable error
	// word names the rollout in messages when no object has its name.
	word string
}

// readResetScope reads the rollout of the name; one that cannot be read is
// a warning, and the reset goes on keeping its cordons.
func readResetScope(cmd *cobra.Command, c client.Client, name, word string) resetScope {
	r, err := findRollout(cmd.Context(), c, name)
	if err != nil {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: cannot read NodeWright or Skyhook %q, so its cordon_ marks stay on the nodes: %v\n", name, err)
		return resetScope{rollout: &rollout{name: name}, unreadable: err, word: word}
	}
	return resetScope{rollout: r, word: word}
}

// kind is how messages name the rollout: its leader's kind, or the word.
func (s resetScope) kind() string {
	if s.leader != nil {
		return kindOf(s.leader)
	}
	return s.word
}

// of is the rollout's object of the kind, nil when none.
func (s resetScope) of(k skyhookv1.RolloutKind) *skyhookv1.Skyhook {
	for _, sk := range []*skyhookv1.Skyhook{s.leader, s.twin} {
		if sk != nil && skyhookv1.KindOf(sk).Kind == k.Kind {
			return sk
		}
	}
	return nil
}

func noState(cmd *cobra.Command, scope resetScope, err error) error {
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "No nodes have state for %s %q\n", scope.kind(), scope.name)
	return nil
}

// nodeReset is what a reset does on one node: the rollout's record goes,
// under both kinds' keys (the operator would move a record left under its
// twin's keys back: reconcile/twins.go), with NodeWright's drainStart_
// marks and this project's marks beside it; its cordon as cordonReset
// says.
type nodeReset struct {
	node *corev1.Node
	// packages is the number of packages in the record, -1 when it cannot
	// be read.
	packages int
	// cordon says what happens to a cordon there ("" for nothing).
	cordon string
	patch  []byte
}

// planResets are the resets of the nodes that have anything of the
// rollout to reset, in the nodes' order. A node whose only mark is a
// cordon the reset keeps is left alone (as NodeWright's CLI v0.5.0).
func planResets(nodes []*corev1.Node, scope resetScope) ([]*nodeReset, error) {
	leaders := map[string]skyhookv1.RolloutKind{}
	if scope.leader != nil {
		leaders[scope.name] = skyhookv1.KindOf(scope.leader)
	}
	var out []*nodeReset
	for _, n := range nodes {
		patches, err := forgetRecords(n, scope.name)
		if err != nil {
			return nil, err
		}
		cordonPatch, what := cordonReset(n, scope)
		if len(patches) == 0 && cordonPatch == nil {
			continue
		}
		r := &nodeReset{node: n, cordon: what}
		if r.patch, err = mergePatches(append(patches, cordonPatch)...); err != nil {
			return nil, err
		}
		if kind, ok := recordKindOn(n, scope.name, leaders); ok {
			state, err := decodeState(n.Annotations[kind.Named(scope.name).NodeStateAnnotation()])
			r.packages = len(state)
			if err != nil {
				r.packages = -1
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// forgetRecords are the patches that remove the rollout's records and
// drainStart_ marks of both kinds from the node.
func forgetRecords(n *corev1.Node, name string) ([][]byte, error) {
	var patches [][]byte
	for _, k := range skyhookv1.RolloutKinds {
		ref := k.Named(name)
		forget, err := nodestate.Forget(n, ref)
		if err != nil {
			return nil, err
		}
		if forget != nil {
			patches = append(patches, forget)
		}
		if _, ok := n.Annotations[ref.DrainStartAnnotation()]; ok {
			patches = append(patches, annotationsPatch(map[string]any{ref.DrainStartAnnotation(): nil}, false))
		}
	}
	return patches, nil
}

// cordonReset is the patch a reset makes to the rollout's cordon on the
// node (nil for none) and what it does, for the summary. Where the rollout
// will run again (its leader selects the node) the cordon it placed, and
// its cordon_ mark, stay: the re-run lifts them. Where no re-run comes
// (the rollout is gone, or no longer selects the node) the cordon_ marks
// go, and a cordon that is the rollout's is no longer: its signature goes,
// and it is lifted unless something else holds the node (another
// rollout's cordon_ mark, a runtime-required cordon). When the rollout
// cannot be read, its marks stay.
func cordonReset(n *corev1.Node, scope resetScope) ([]byte, string) {
	marks := map[string]any{}
	for _, k := range skyhookv1.RolloutKinds {
		if key := k.Named(scope.name).CordonAnnotation(); n.Annotations[key] != "" {
			marks[key] = nil
		}
	}
	if scope.unreadable != nil {
		if len(marks) > 0 {
			return nil, "keeps its cordon_ mark"
		}
		return nil, ""
	}
	if l := scope.leader; l != nil && selects(l, n) && cordon.OwnedBy(n, l) {
		delete(marks, skyhookv1.RefOf(l).CordonAnnotation()) // the twin's mark, if any, is a stale copy
		if len(marks) == 0 {
			return nil, "its cordon stays for the re-run to lift"
		}
		return annotationsPatch(marks, false), "its cordon stays for the re-run to lift"
	}
	if k, owned := cordonOwner(n, scope); owned {
		// No longer the rollout's: its signature goes too, so that no later
		// pass of it lifts a cordon another holds.
		marks[cordon.AnnotationOf(k)] = nil
		if heldByOthers(n, scope.name) {
			return annotationsPatch(marks, false), "its cordon stays: something else holds the node"
		}
		return annotationsPatch(marks, true), "lifts its cordon"
	}
	if len(marks) == 0 {
		return nil, ""
	}
	return annotationsPatch(marks, false), ""
}

// cordonOwner is the kind of the rollout whose cordon the node's is, if it
// is the rollout's: cordon.OwnedBy its object of that kind, or, for a kind
// no object of the name has, signed with its name or marked cordon_<name>
// without a signature.
func cordonOwner(n *corev1.Node, scope resetScope) (skyhookv1.RolloutKind, bool) {
	for _, k := range skyhookv1.RolloutKinds {
		if sk := scope.of(k); sk != nil {
			if cordon.OwnedBy(n, sk) {
				return k, true
			}
			continue
		}
		signature, signed := n.Annotations[cordon.AnnotationOf(k)]
		switch {
		case !n.Spec.Unschedulable:
		case signed && strings.HasPrefix(signature, scope.name+"/"):
			return k, true
		case !signed && n.Annotations[k.Named(scope.name).CordonAnnotation()] == "true":
			return k, true
		}
	}
	return skyhookv1.RolloutKind{}, false
}

// heldByOthers reports whether something besides the rollout holds the
// node cordoned: another rollout's cordon_ mark, or a runtime-required
// cordon (which outlasts resets).
func heldByOthers(n *corev1.Node, name string) bool {
	if runtimeRequiredCordon(n) {
		return true
	}
	for key := range n.Annotations {
		for _, k := range skyhookv1.RolloutKinds {
			if other, ok := strings.CutPrefix(key, k.Prefix+"/cordon_"); ok && other != name {
				return true
			}
		}
	}
	return false
}

// selects reports whether the rollout's node selector matches the node.
func selects(sk *skyhookv1.Skyhook, n *corev1.Node) bool {
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	return err == nil && sel.Matches(labels.Set(n.Labels))
}

// annotationsPatch is a merge patch of the node's annotations; uncordon
// also lifts its cordon.
func annotationsPatch(annotations map[string]any, uncordon bool) []byte {
	patch := map[string]any{"metadata": map[string]any{"annotations": annotations}}
	if uncordon {
		patch["spec"] = map[string]any{"unschedulable": nil}
	}
	encoded, _ := json.Marshal(patch) // strings and nils only: cannot fail
	return encoded
}

// mergePatches is one JSON merge patch doing what the patches do (nil
// ones left out).
func mergePatches(patches ...[]byte) ([]byte, error) {
	merged := map[string]any{}
	for _, p := range patches {
		if p == nil {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal(p, &m); err != nil {
			return nil, err
		}
		mergeInto(merged, m)
	}
	return json.Marshal(merged)
}

func mergeInto(dst, src map[string]any) {
	for k, v := range src {
		if sub, ok := v.(map[string]any); ok {
			if d, ok := dst[k].(map[string]any); ok {
				mergeInto(d, sub)
				continue
			}
		}
		dst[k] = v
	}
}

// resetRun is a reset of several nodes: a summary, a question, the
// patches, and what follows them (the batch reset).
type resetRun struct {
	scope    resetScope
	resets   []*nodeReset
	yes      bool
	note     string
	question string
	after    func(...client.PatchOption) error
}

// runResets prints what the reset does, asks, and does it (with --dry-run
// has the API server check it); it reports whether the nodes changed.
func runResets(cmd *cobra.Command, c client.Client, run resetRun) (bool, error) {
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s: %s\nNodes to reset (%d):\n", run.scope.kind(), run.scope.name, len(run.resets))
	for _, r := range run.resets {
		what := fmt.Sprintf("%d packages", r.packages)
		if r.packages < 0 {
			what = "unreadable record"
		}
		if r.cordon != "" {
			what += ", " + r.cordon
		}
		fmt.Fprintf(out, "  - %s (%s)\n", r.node.Name, what)
	}
	if run.note != "" {
		fmt.Fprintln(out, run.note)
	}
	if !dryRun(cmd) && !confirmed(cmd, run.yes, run.question) {
		return false, nil
	}
	var failed []string
	changed := 0
	for _, r := range run.resets {
		if err := c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(r.node.Name)}, client.RawPatch(types.MergePatchType, r.patch), withDryRun(cmd)...); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.node.Name, err))
			continue
		}
		changed++
	}
	if run.after != nil && len(failed) == 0 && dryRun(cmd) {
		if err := run.after(client.DryRunAll); err != nil {
			return false, err
		}
	}
	if err := reportNodeChanges(cmd, failed, fmt.Sprintf("Successfully reset %d node(s) for %s %q", changed, run.scope.kind(), run.scope.name), changed); err != nil || dryRun(cmd) {
		return false, err
	}
	if run.after != nil {
		if err := run.after(); err != nil {
			return true, err
		}
	}
	return true, nil
}
