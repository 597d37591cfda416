package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// newPackageCommand groups what concerns one package: status, logs and
// rerun.
func newPackageCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "package", Short: "See, read the logs of and rerun a package on nodes"}
	cmd.AddCommand(packageStatusCommand(), newLogsCommand(), newRerunCommand())
	return cmd
}

// packageStatusEntry is a package's record on one node, as NodeWright's
// plugin prints it; SkyhookName is this project's.
type packageStatusEntry struct {
	skyhookv1.PackageStatus
	NodeName    string `json:"nodeName"`
	SkyhookName string `json:"skyhookName"`
}

func packageStatusCommand() *cobra.Command {
	var skyhook string
	var nodePatterns []string
	cmd := &cobra.Command{
		Use:   "status <package> [--skyhook S] [--node N]...",
		Short: "The package's record on every node (or on the nodes --node selects)",
		Long: `Prints, per Skyhook, its packages and a row per node with a record of the
package: version, stage and state; -o wide adds the restarts and the image.
Without --skyhook, every Skyhook with the package. -o table|wide|json|yaml.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			skyhooks, err := skyhooksNamed(cmd, c, skyhook)
			if err != nil {
				return err
			}
			targets := pointers(nodes)
			if len(nodePatterns) > 0 {
				if targets, err = selectNodes(nodes, nodePatterns); err != nil {
					return err
				}
			}
			all := []packageStatusEntry{}
			var blocks [][]packageStatusEntry
			for _, sk := range skyhooks {
				var block []packageStatusEntry
				for _, r := range readRecords(cmd, targets, sk.Name) {
					for _, p := range r.packages() {
						if p.Name == args[0] {
							block = append(block, packageStatusEntry{PackageStatus: p, NodeName: r.node.Name, SkyhookName: sk.Name})
						}
					}
				}
				all = append(all, block...)
				blocks = append(blocks, block)
			}
			w := cmd.OutOrStdout()
			if done, err := printStructured(w, output, all); done {
				return err
			}
			if len(all) == 0 {
				if skyhook != "" {
					fmt.Fprintf(w, "No package status found for skyhook %q\n", skyhook)
				} else {
					fmt.Fprintf(w, "No package status found for package %q\n", args[0])
				}
				return nil
			}
			first := true
			for i, block := range blocks {
				if len(block) == 0 {
					continue
				}
				if !first {
					fmt.Fprintln(w)
				}
				first = false
				if err := printPackageStatus(w, skyhooks[i], block, output); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "the Skyhook (without it, every Skyhook with the package)")
	cmd.Flags().StringArrayVar(&nodePatterns, "node", nil, "only this node, a name or a regular expression (repeatable)")
	return cmd
}

// skyhooksNamed is the named Skyhook, or every Skyhook sorted by name.
func skyhooksNamed(cmd *cobra.Command, c client.Client, name string) ([]*skyhookv1.Skyhook, error) {
	if name != "" {
		sk := &skyhookv1.Skyhook{}
		if err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, sk); err != nil {
			return nil, fmt.Errorf("getting skyhook %q: %w", name, err)
		}
		return []*skyhookv1.Skyhook{sk}, nil
	}
	var list skyhookv1.SkyhookList
	if err := c.List(cmd.Context(), &list); err != nil {
		return nil, err
	}
	var out []*skyhookv1.Skyhook
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	slices.SortFunc(out, func(a, b *skyhookv1.Skyhook) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func printPackageStatus(w io.Writer, sk *skyhookv1.Skyhook, entries []packageStatusEntry, output string) error {
	var pkgs []string
	for _, name := range slices.Sorted(maps.Keys(sk.Spec.Packages)) {
		pkgs = append(pkgs, name+":"+sk.Spec.Packages[name].Version)
	}
	fmt.Fprintf(w, "Skyhook: %s\nPackages: %s\n\n", sk.Name, strings.Join(pkgs, ", "))
	headers := []string{"NODE", "PACKAGE", "VERSION", "STAGE", "STATE"}
	if output == "wide" {
		headers = append(headers, "RESTARTS", "IMAGE")
	}
	var rows [][]string
	for _, e := range entries {
		row := []string{e.NodeName, e.Name, e.Version, string(e.Stage), string(e.State)}
		if output == "wide" {
			row = append(row, strconv.Itoa(int(e.Restarts)), e.Image)
		}
		rows = append(rows, row)
	}
	return printColumns(w, headers, rows)
}

// newRerunCommand makes the operator run a package again on nodes: from
// the start (its record goes), or from one stage.
func newRerunCommand() *cobra.Command {
	var skyhook, stage string
	var nodePatterns []string
	var yes bool
	cmd := &cobra.Command{
		Use:   "rerun <package> --skyhook S --node N... [--stage STAGE]",
		Short: "Run a package again on nodes, from the start or from one stage",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if skyhook == "" {
				return fmt.Errorf("--skyhook flag is required")
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
			sk := &skyhookv1.Skyhook{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: skyhook}, sk); err != nil {
				return fmt.Errorf("getting skyhook %q: %w", skyhook, err)
			}
			spec, ok := sk.Spec.Packages[args[0]]
			if !ok {
				return fmt.Errorf("package %q not found in skyhook %q", args[0], skyhook)
			}
			return rerun(cmd, c, rerunRequest{pkg: args[0], version: spec.Version, skyhook: skyhook, stage: stage, yes: yes},
				readRecords(cmd, pointers(nodes), skyhook), nodePatterns)
		},
	}
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "the Skyhook of the package (required)")
	cmd.Flags().StringArrayVar(&nodePatterns, "node", nil, "a node, by name or regular expression (repeatable, required)")
	cmd.Flags().StringVar(&stage, "stage", "", "rerun from this stage ("+stageNames+") instead of from the start")
	addConfirmFlags(cmd, &yes)
	return cmd
}

type rerunRequest struct {
	pkg, version, skyhook, stage string
	yes                          bool
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
	fmt.Fprintf(out, "Package: %s (version %s)\nSkyhook: %s\n", req.pkg, req.version, req.skyhook)
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

// rerunOn writes the node's record without the package (from the start:
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
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{skyhookv1.NodeStateAnnotation(req.skyhook): value}}})
	if err != nil {
		return err
	}
	return c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(r.node.Name)}, client.RawPatch(types.MergePatchType, patch), withDryRun(cmd)...)
}
