package main

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/reconcile/nodestate"
)

// newNodeCommand groups what concerns one node: list, status, ignore,
// unignore and reset.
func newNodeCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "See and steer Skyhooks on nodes"}
	var skyhook, listOutput, statusOutput string
	list := &cobra.Command{
		Use:   "list",
		Short: "Nodes and each Skyhook's status on them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkOutput(listOutput, listFormats); err != nil {
				return err
			}
			_, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			rows := []nodeRow{}
			for i := range nodes {
				n := &nodes[i]
				for _, sk := range skyhooksOn(n) {
					if skyhook == "" || sk == skyhook {
						rows = append(rows, nodeRow{Node: n.Name, Skyhook: sk, Status: n.Labels[skyhookv1.StatusKey(sk)],
							Ignored: n.Labels[skyhookv1.IgnoreNodeLabel] == "true", Packages: packagesOn(n, sk)})
					}
				}
			}
			return printNodeRows(cmd.OutOrStdout(), rows, listOutput)
		},
	}
	list.Flags().StringVar(&skyhook, "skyhook", "", "only this Skyhook")
	addOutputFlag(list, &listOutput, listFormats)
	status := &cobra.Command{
		Use:   "status <node>",
		Short: "Every package record of every Skyhook on a node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(statusOutput, listFormats); err != nil {
				return err
			}
			_, n, err := clusterNode(cmd, args[0])
			if err != nil {
				return err
			}
			rows := []recordRow{}
			for _, sk := range skyhooksOn(n) {
				rows = append(rows, records(n, sk, "")...)
			}
			return printRecordRows(cmd.OutOrStdout(), rows, statusOutput, "SKYHOOK\tPACKAGE", func(r recordRow) string { return r.Skyhook + "\t" + r.Package })
		},
	}
	addOutputFlag(status, &statusOutput, listFormats)
	cmd.AddCommand(list, status, nodeLabelCommand("ignore", true), nodeLabelCommand("unignore", false), nodeResetCommand())
	return cmd
}

// nodeRow is one Skyhook on one node, as `node list` shows it.
type nodeRow struct {
	Node    string `json:"node"`
	Skyhook string `json:"skyhook"`
	Status  string `json:"status"`
	Ignored bool   `json:"ignored"`
	// Packages are the node's records of the Skyhook, as
	// name:version stage/state (-o wide).
	Packages []string `json:"packages"`
}

func printNodeRows(w io.Writer, rows []nodeRow, output string) error {
	if done, err := printStructured(w, output, rows); done {
		return err
	}
	header := "NODE\tSKYHOOK\tSTATUS\tIGNORED"
	if output == "wide" {
		header += "\tPACKAGES"
	}
	lines := []string{header}
	for _, r := range rows {
		line := fmt.Sprintf("%s\t%s\t%s\t%t", r.Node, r.Skyhook, r.Status, r.Ignored)
		if output == "wide" {
			line += "\t" + strings.Join(r.Packages, ", ")
		}
		lines = append(lines, line)
	}
	return printTable(w, lines...)
}

// packagesOn lists the Skyhook's records on the node for -o wide.
func packagesOn(n *corev1.Node, skyhook string) []string {
	out := []string{}
	for _, r := range records(n, skyhook, "") {
		if r.Error != "" {
			out = append(out, "unreadable record")
			continue
		}
		out = append(out, fmt.Sprintf("%s:%s %s/%s", r.Package, r.Version, r.Stage, r.State))
	}
	return out
}

// recordRow is one package record on one node (`node status`, `package
// status`).
type recordRow struct {
	Node     string `json:"node"`
	Skyhook  string `json:"skyhook"`
	Package  string `json:"package"`
	Version  string `json:"version"`
	Image    string `json:"image"`
	Stage    string `json:"stage"`
	State    string `json:"state"`
	Restarts int32  `json:"restarts"`
	// Error says why the Skyhook's record on the node cannot be read.
	Error string `json:"error,omitempty"`
}

// records are the Skyhook's package records on the node (of one package
// when pkg is set), sorted by package and version.
func records(n *corev1.Node, skyhook, pkg string) []recordRow {
	state, err := nodestate.Read(n, skyhook)
	if err != nil {
		return []recordRow{{Node: n.Name, Skyhook: skyhook, Error: err.Error()}}
	}
	var rows []recordRow
	for _, k := range slices.Sorted(maps.Keys(state)) {
		e := state[k]
		if pkg == "" || e.Name == pkg {
			rows = append(rows, recordRow{Node: n.Name, Skyhook: skyhook, Package: e.Name, Version: e.Version, Image: e.Image,
				Stage: string(e.Stage), State: string(e.State), Restarts: e.Restarts})
		}
	}
	return rows
}

// printRecordRows prints records; the table starts with the columns that
// tell the rows apart (first and firstHeader), -o wide adds the image.
func printRecordRows(w io.Writer, rows []recordRow, output, firstHeader string, first func(recordRow) string) error {
	if done, err := printStructured(w, output, rows); done {
		return err
	}
	header := firstHeader + "\tVERSION\tSTAGE\tSTATE\tRESTARTS"
	if output == "wide" {
		header += "\tIMAGE"
	}
	lines := []string{header}
	for _, r := range rows {
		if r.Error != "" {
			lines = append(lines, fmt.Sprintf("%s\t(unreadable record: %s)", first(r), r.Error))
			continue
		}
		line := fmt.Sprintf("%s\t%s\t%s\t%s\t%d", first(r), r.Version, r.Stage, r.State, r.Restarts)
		if output == "wide" {
			line += "\t" + r.Image
		}
		lines = append(lines, line)
	}
	return printTable(w, lines...)
}

// skyhooksOn are the Skyhooks with a status on the node, sorted.
func skyhooksOn(n *corev1.Node) []string {
	var out []string
	for k := range n.Labels {
		if sk, ok := strings.CutPrefix(k, skyhookv1.StatusPrefix); ok {
			out = append(out, sk)
		}
	}
	sort.Strings(out)
	return out
}

// nodeLabelCommand sets or removes skyhook.nvidia.com/ignore=true.
func nodeLabelCommand(verb string, set bool) *cobra.Command {
	var yes, dryRun bool
	cmd := &cobra.Command{
		Use:   verb + " <node>",
		Short: map[bool]string{true: "Leave a node out of every Skyhook (it is reported blocked)", false: "Undo ignore"}[set],
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			value := any(nil)
			if set {
				value = "true"
			}
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{skyhookv1.IgnoreNodeLabel: value}}})
			return applyChange(cmd, fmt.Sprintf("%s node %s", verb, args[0]), yes, dryRun, func(opts ...client.PatchOption) error {
				return c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(args[0])}, client.RawPatch(types.MergePatchType, patch), opts...)
			})
		},
	}
	addChangeFlags(cmd, &yes, &dryRun)
	return cmd
}

// nodeResetCommand forgets a Skyhook's record on one node, so everything
// reruns there.
func nodeResetCommand() *cobra.Command {
	var yes, dryRun bool
	var skyhook string
	cmd := &cobra.Command{
		Use:   "reset <node> --skyhook <skyhook>",
		Short: "Forget a Skyhook's record on a node so that its packages run again there",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if skyhook == "" {
				return fmt.Errorf("--skyhook: required")
			}
			c, n, err := clusterNode(cmd, args[0])
			if err != nil {
				return err
			}
			return forgetOn(cmd, c, n, skyhook, yes, dryRun)
		},
	}
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "the Skyhook whose record goes")
	addChangeFlags(cmd, &yes, &dryRun)
	return cmd
}

// forgetOn removes a Skyhook's record from a node (and its cordon, when the
// Skyhook placed it) after confirmation.
func forgetOn(cmd *cobra.Command, c client.Client, n *corev1.Node, skyhook string, yes, dryRun bool) error {
	patch, err := nodestate.Forget(n, skyhook)
	if err != nil {
		return err
	}
	release := map[string]any{}
	if owner := n.Annotations[cordon.Annotation]; strings.HasPrefix(owner, skyhook+"/") {
		release = map[string]any{"annotations": map[string]any{cordon.Annotation: nil}}
	}
	if patch == nil && len(release) == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "node %s has no record of Skyhook %s\n", n.Name, skyhook)
		return nil
	}
	var merged map[string]any
	if patch != nil {
		if err := json.Unmarshal(patch, &merged); err != nil {
			return err
		}
	} else {
		merged = map[string]any{"metadata": map[string]any{}}
	}
	what := fmt.Sprintf("reset node %s for Skyhook %s (its packages run again there)", n.Name, skyhook)
	if len(release) > 0 {
		md := merged["metadata"].(map[string]any)
		anns, _ := md["annotations"].(map[string]any)
		if anns == nil {
			anns = map[string]any{}
		}
		anns[cordon.Annotation] = nil
		md["annotations"] = anns
		merged["spec"] = map[string]any{"unschedulable": nil}
		what += " and lift its cordon"
	}
	body, err := json.Marshal(merged)
	if err != nil {
		return err
	}
	return applyChange(cmd, what, yes, dryRun, func(opts ...client.PatchOption) error {
		return c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(n.Name)}, client.RawPatch(types.MergePatchType, body), opts...)
	})
}

// newResetCommand forgets a Skyhook's records on every node.
func newResetCommand() *cobra.Command {
	var yes, dryRun bool
	cmd := &cobra.Command{
		Use:   "reset <skyhook>",
		Short: "Forget a Skyhook's records on every node so that everything reruns; lifts its cordons",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			var with []*corev1.Node
			for i := range nodes {
				if _, ok := nodes[i].Annotations[skyhookv1.NodeStateAnnotation(args[0])]; ok {
					with = append(with, &nodes[i])
				}
			}
			if len(with) == 0 {
				fmt.Fprintf(cmd.OutOrStdout(), "no node has a record of Skyhook %s\n", args[0])
				return nil
			}
			if !yes && !dryRun && !confirm(cmd, fmt.Sprintf("Reset Skyhook %s on %d nodes (everything reruns there)?", args[0], len(with))) {
				return fmt.Errorf("not confirmed; nothing changed")
			}
			for _, n := range with {
				if err := forgetOn(cmd, c, n, args[0], true, dryRun); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addChangeFlags(cmd, &yes, &dryRun)
	return cmd
}
