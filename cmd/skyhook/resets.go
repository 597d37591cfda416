package main

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
)

// What the resets share (skyhook reset, node reset, deployment-policy
// reset): the plan of each node's reset, running it with its question and
// report, and the request that the operator start a Skyhook's batches
// over.

// batchReset sets the Skyhook's reset-batch-state annotation (the time of
// the request); the operator starts what starts over, then removes it. A
// Skyhook that does not exist has nothing to start over: a warning.
func batchReset(cmd *cobra.Command, c client.Client, sk *skyhookv1.Skyhook, exists bool, what string) func(...client.PatchOption) error {
	return func(opts ...client.PatchOption) error {
		if !exists {
			fmt.Fprintf(cmd.ErrOrStderr(), "Warning: Skyhook %q not found: no batch state to reset\n", sk.Name)
			return nil
		}
		patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{
			skyhookv1.ResetBatchStateAnnotation: time.Now().UTC().Format(time.RFC3339)}}})
		if err != nil {
			return err
		}
		if err := c.Patch(cmd.Context(), sk, client.RawPatch(types.MergePatchType, patch), opts...); err != nil {
			return fmt.Errorf("requesting the batch state reset of Skyhook %q: %w", sk.Name, err)
		}
		if len(opts) == 0 {
			fmt.Fprintf(cmd.OutOrStdout(), "Batch state reset requested for Skyhook %q: the operator starts %s over\n", sk.Name, what)
		}
		return nil
	}
}

// skyhookOrName is the Skyhook, or one with only its name when it does not
// exist (its records can still be reset).
func skyhookOrName(cmd *cobra.Command, c client.Client, name string) (*skyhookv1.Skyhook, bool, error) {
	sk := &skyhookv1.Skyhook{}
	err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, sk)
	if apierrors.IsNotFound(err) {
		return &skyhookv1.Skyhook{ObjectMeta: objectMeta(name)}, false, nil
	}
	return sk, err == nil, err
}

func noState(cmd *cobra.Command, skyhook string, err error) error {
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "No nodes have state for Skyhook %q\n", skyhook)
	return nil
}

// nodeReset is what a reset does on one node: the Skyhook's record goes
// (nodeState, status, and this project's marks beside them), and its
// cordon is lifted when it is the Skyhook's (cordon.OwnedBy), or else a
// stale cordon_<skyhook> mark dropped.
type nodeReset struct {
	node *corev1.Node
	// packages is the number of packages in the record, -1 when it cannot
	// be read.
	packages    int
	liftsCordon bool
	patch       []byte
}

// planResets are the resets of the nodes that have anything of the
// Skyhook, in the nodes' order.
func planResets(nodes []*corev1.Node, sk *skyhookv1.Skyhook) ([]*nodeReset, error) {
	var out []*nodeReset
	for _, n := range nodes {
		forget, err := nodestate.Forget(n, skyhookv1.RefOf(sk))
		if err != nil {
			return nil, err
		}
		release, err := cordon.Release(n, sk)
		if err != nil {
			return nil, err
		}
		r := &nodeReset{node: n, liftsCordon: release != nil}
		if _, marked := n.Annotations[skyhookv1.CordonAnnotation(sk.Name)]; release == nil && marked {
			release = []byte(fmt.Sprintf(`{"metadata":{"annotations":{%q:null}}}`, skyhookv1.CordonAnnotation(sk.Name)))
		}
		if forget == nil && release == nil {
			continue
		}
		if r.patch, err = mergePatches(forget, release); err != nil {
			return nil, err
		}
		state, err := decodeState(n.Annotations[skyhookv1.NodeStateAnnotation(sk.Name)])
		r.packages = len(state)
		if err != nil {
			r.packages = -1
		}
		out = append(out, r)
	}
	return out, nil
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
	skyhook  string
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
	fmt.Fprintf(out, "Skyhook: %s\nNodes to reset (%d):\n", run.skyhook, len(run.resets))
	for _, r := range run.resets {
		what := fmt.Sprintf("%d packages", r.packages)
		if r.packages < 0 {
			what = "unreadable record"
		}
		if r.liftsCordon {
			what += ", lifts its cordon"
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
	if err := reportNodeChanges(cmd, failed, fmt.Sprintf("Successfully reset %d node(s) for Skyhook %q", changed, run.skyhook), changed); err != nil || dryRun(cmd) {
		return false, err
	}
	if run.after != nil {
		if err := run.after(); err != nil {
			return true, err
		}
	}
	return true, nil
}
