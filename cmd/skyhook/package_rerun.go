package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// newRerunCommand makes the operator run a package again on nodes: from
// the start (its record goes), or from one stage.
func newRerunCommand() *cobra.Command {
	var named rolloutFlag
	var stage string
	var nodePatterns []string
	var yes bool
	cmd := &cobra.Command{
		Use:   "rerun <package> --nodewright NAME --node N... [--stage STAGE]",
		Short: "Run a package again on nodes, from the start or from one stage",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			skyhook, err := named.required()
			if err != nil {
				return err
			}
			if len(nodePatterns) == 0 {
				return fmt.Errorf("at least one --node flag is required")
			}
			if stage != "" && !validStage(stage) {
				return fmt.Errorf("invalid stage %q: must be one of %s", stage, stageNames)
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			sk, err := existingRollout(cmd.Context(), c, skyhook)
			if err != nil {
				return err
			}
			spec, ok := sk.Spec.Packages[args[0]]
			if !ok {
				return fmt.Errorf("package %q not found in %s %q", args[0], strings.ToLower(kindOf(sk)), skyhook)
			}
			leaders := map[string]skyhookv1.RolloutKind{skyhook: skyhookv1.KindOf(sk)}
			return rerun(cmd, c, rerunRequest{pkg: args[0], version: spec.Version, rollout: sk, stage: stage, yes: yes},
				readRecords(cmd, pointers(nodes), skyhook, leaders), nodePatterns)
		},
	}
	addRolloutFlag(cmd, &named, "the NodeWright or Skyhook of the package (required)")
	cmd.Flags().StringArrayVar(&nodePatterns, "node", nil, "a node, by name or regular expression (repeatable, required)")
	cmd.Flags().StringVar(&stage, "stage", "", "rerun from this stage ("+stageNames+") instead of from the start")
	addConfirmFlags(cmd, &yes)
	return cmd
}

type rerunRequest struct {
	pkg, version, stage string
	rollout             *skyhookv1.Skyhook
	yes                 bool
}

// rerun changes the package's entries in the records of the nodes the
// patterns select (among the nodes with a record of the Skyhook).
func rerun(cmd *cobra.Command, c client.Client, req rerunRequest, records []nodeRecord, patterns []string) error {
	out := cmd.OutOrStdout()
	var names []string
	for _, r := range records {
		names = append(names, r.node.Name)
	}
	matched, err := matchNodes(patterns, names)
	if err != nil {
		return err
	}
	if len(matched) == 0 {
		fmt.Fprintln(out, noNodesMatched)
		return nil
	}
	var update []nodeRecord
	for _, r := range records {
		if slices.Contains(matched, r.node.Name) && slices.ContainsFunc(r.packages(), func(p skyhookv1.PackageStatus) bool { return p.Name == req.pkg }) {
			update = append(update, r)
		}
	}
	if len(update) == 0 {
		fmt.Fprintf(out, "Package %q (version %s) has no state on matched nodes\n", req.pkg, req.version)
		return nil
	}
	fmt.Fprintf(out, "Package: %s (version %s)\n%s: %s\n", req.pkg, req.version, kindOf(req.rollout), req.rollout.Name)
	question := "\nThis will remove package state from node annotations and cause the package to re-run from the beginning.\nContinue?"
	if req.stage != "" {
		fmt.Fprintf(out, "Re-run from stage: %s\n", req.stage)
		question = fmt.Sprintf("\nThis will reset package state to re-run from the '%s' stage.\nContinue?", req.stage)
	}
	fmt.Fprintf(out, "Nodes to reset (%d):\n", len(update))
	for _, r := range update {
		for _, p := range r.packages() {
			if p.Name == req.pkg {
				fmt.Fprintf(out, "  - %s (current state: %s, stage: %s)\n", r.node.Name, p.State, p.Stage)
			}
		}
	}
	if !dryRun(cmd) && !confirmed(cmd, req.yes, question) {
		return nil
	}
	var failed []string
	for _, r := range update {
		if err := rerunOn(cmd, c, r, req); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.node.Name, err))
		}
	}
	changed := len(update) - len(failed)
	return reportNodeChanges(cmd, failed, fmt.Sprintf("Successfully reset package %q on %d node(s)", req.pkg, changed), changed)
}

// rerunOn writes the node's record (under the key it was read from)
// without the package (from the start:
// the operator installs it again; the annotation goes when nothing is
// left), or with the package's stage in progress and no pod (the operator
// starts one).
func rerunOn(cmd *cobra.Command, c client.Client, r nodeRecord, req rerunRequest) error {
	state := maps.Clone(r.state)
	for k, e := range state {
		if e.Name != req.pkg {
			continue
		}
		if req.stage == "" {
			delete(state, k)
			continue
		}
		e.Stage, e.State, e.Restarts = skyhookv1.Stage(req.stage), skyhookv1.StateInProgress, 0
		state[k] = e
	}
	value := any(nil)
	if len(state) > 0 {
		encoded, err := json.Marshal(state)
		if err != nil {
			return err
		}
		value = string(encoded)
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{r.ref.NodeStateAnnotation(): value}}})
	if err != nil {
		return err
	}
	return c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(r.node.Name)}, client.RawPatch(types.MergePatchType, patch), withDryRun(cmd)...)
}
