package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// newNodeCommand groups what concerns nodes: list, status, ignore,
// unignore and reset. Every node argument is a name or a regular
// expression over the whole name (see matchNodes).
func newNodeCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "node", Short: "See and steer Skyhooks on nodes"}
	cmd.AddCommand(nodeListCommand(), nodeStatusCommand(), nodeIgnoreCommand("ignore", true), nodeIgnoreCommand("unignore", false), nodeResetCommand())
	return cmd
}

// nodeListEntry is one node of `node list`, as NodeWright's plugin prints
// it; Ignored is this project's.
type nodeListEntry struct {
	NodeName         string `json:"nodeName"`
	Status           string `json:"status"`
	PackagesComplete int    `json:"packagesComplete"`
	PackagesTotal    int    `json:"packagesTotal"`
	Restarts         int32  `json:"restarts"`
	Ignored          bool   `json:"ignored"`
}

// nodeList is `node list` of one rollout; Kind (NodeWright or Skyhook)
// is this project's.
type nodeList struct {
	SkyhookName string          `json:"skyhookName"`
	Kind        string          `json:"kind"`
	Nodes       []nodeListEntry `json:"nodes"`
}

func nodeListCommand() *cobra.Command {
	var named rolloutFlag
	cmd := &cobra.Command{
		Use:   "list [--nodewright NAME]",
		Short: "The nodes with a record of a NodeWright or Skyhook (of each without --nodewright) and where they stand",
		Long: `Prints, per NodeWright or Skyhook, a summary and its nodes: the status
derived from the node's record (erroring, complete, in_progress or unknown),
complete packages out of all, and with -o wide the restarts and whether the
node is ignored. -o table|wide|json|yaml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			name, err := named.name()
			if err != nil {
				return err
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			leaders, err := leaderKinds(cmd.Context(), c)
			if err != nil {
				return err
			}
			lists := nodeLists(readRecords(cmd, pointers(nodes), name, leaders), leaders)
			if name != "" {
				if len(lists) == 0 {
					lists = []nodeList{{SkyhookName: name, Kind: leaderKindWord(leaders, name, named.kindWord()), Nodes: []nodeListEntry{}}}
				}
				return printNodeList(cmd.OutOrStdout(), lists[0], output)
			}
			return printNodeLists(cmd.OutOrStdout(), lists, output)
		},
	}
	addRolloutFlag(cmd, &named, "the NodeWright or Skyhook (without it, each with a record on a node, one after the other)")
	return cmd
}

// nodeLists groups the records by rollout, in the records' order of names.
func nodeLists(records []nodeRecord, leaders map[string]skyhookv1.RolloutKind) []nodeList {
	lists := []nodeList{}
	byName := map[string]int{}
	for _, r := range records {
		i, ok := byName[r.ref.Name]
		if !ok {
			i = len(lists)
			byName[r.ref.Name] = i
			lists = append(lists, nodeList{SkyhookName: r.ref.Name, Kind: leaderKindWord(leaders, r.ref.Name, r.ref.Kind.Kind), Nodes: []nodeListEntry{}})
		}
		status, complete, restarts := r.summary()
		lists[i].Nodes = append(lists[i].Nodes, nodeListEntry{NodeName: r.node.Name, Status: status, PackagesComplete: complete,
			PackagesTotal: len(r.state), Restarts: restarts, Ignored: r.node.Labels[r.ref.Kind.IgnoreNodeLabel()] == "true"})
	}
	slices.SortFunc(lists, func(a, b nodeList) int { return strings.Compare(a.SkyhookName, b.SkyhookName) })
	return lists
}

// leaderKindWord is the kind of the object leading the name, or otherwise
// the word given.
func leaderKindWord(leaders map[string]skyhookv1.RolloutKind, name, otherwise string) string {
	if k, ok := leaders[name]; ok {
		return k.Kind
	}
	return otherwise
}

// printNodeLists prints every rollout's nodes, one after the other.
func printNodeLists(w io.Writer, lists []nodeList, output string) error {
	if done, err := printStructured(w, output, lists); done {
		return err
	}
	if len(lists) == 0 {
		fmt.Fprintln(w, "No NodeWright or Skyhook has a record on any node")
	}
	for i, l := range lists {
		if i > 0 {
			fmt.Fprintln(w)
		}
		if err := printNodeList(w, l, output); err != nil {
			return err
		}
	}
	return nil
}

// printNodeList prints one rollout's nodes as NodeWright's plugin does.
func printNodeList(w io.Writer, l nodeList, output string) error {
	if done, err := printStructured(w, output, l); done {
		return err
	}
	if len(l.Nodes) == 0 {
		_, err := fmt.Fprintf(w, "No nodes found for %s %q\n", l.Kind, l.SkyhookName)
		return err
	}
	complete, erroring := 0, 0
	for _, n := range l.Nodes {
		switch n.Status {
		case string(skyhookv1.StateComplete):
			complete++
		case string(skyhookv1.StateErroring):
			erroring++
		}
	}
	fmt.Fprintf(w, "%s: %s\n\nSummary: %d nodes (%d complete, %d erroring, %d in progress)\n\n",
		l.Kind, l.SkyhookName, len(l.Nodes), complete, erroring, len(l.Nodes)-complete-erroring)
	headers := []string{"NODE", "STATUS", "PACKAGES"}
	if output == "wide" {
		headers = append(headers, "RESTARTS", "IGNORED")
	}
	var rows [][]string
	for _, n := range l.Nodes {
		status := n.Status
		if status == string(skyhookv1.StateErroring) {
			status = strings.ToUpper(status)
		}
		row := []string{n.NodeName, status, fmt.Sprintf("%d/%d", n.PackagesComplete, n.PackagesTotal)}
		if output == "wide" {
			row = append(row, strconv.Itoa(int(n.Restarts)), strconv.FormatBool(n.Ignored))
		}
		rows = append(rows, row)
	}
	return printColumns(w, headers, rows)
}

// nodeStatusEntry is one rollout on one node, as NodeWright's plugin's
// `node status` prints it (Cordoned and RuntimeRequiredCordon since its
// v0.4.0); Kind is this project's.
type nodeStatusEntry struct {
	NodeName              string              `json:"nodeName"`
	SkyhookName           string              `json:"skyhookName"`
	Kind                  string              `json:"kind"`
	Status                string              `json:"status"`
	PackagesComplete      int                 `json:"packagesComplete"`
	PackagesTotal         int                 `json:"packagesTotal"`
	Packages              []nodeStatusPackage `json:"packages,omitempty"`
	Cordoned              bool                `json:"cordoned"`
	RuntimeRequiredCordon bool                `json:"runtimeRequiredCordon"`
}

type nodeStatusPackage struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Stage    string `json:"stage"`
	State    string `json:"state"`
	Restarts int32  `json:"restarts"`
	Image    string `json:"image,omitempty"`
}

func nodeStatusCommand() *cobra.Command {
	var named rolloutFlag
	cmd := &cobra.Command{
		Use:   "status [node...] [--nodewright NAME]",
		Short: "Every NodeWright's and Skyhook's record on the nodes (on every node without arguments)",
		Long: `Prints a row per rollout and node: the status derived from the record, the
complete packages out of all, whether the node is cordoned and whether that
cordon is a runtime-required one (the annotation runtimeRequiredCordon, which
only its owner lifts); -o wide prints a row per package instead (version,
stage, state, restarts, image, and the two cordon columns).
-o table|wide|json|yaml.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			name, err := named.name()
			if err != nil {
				return err
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			targets := pointers(nodes)
			if len(args) > 0 {
				if targets, err = selectNodes(nodes, args); err != nil {
					return err
				}
				if len(targets) == 0 {
					fmt.Fprintln(cmd.OutOrStdout(), noNodesMatched)
					return nil
				}
			}
			leaders, err := leaderKinds(cmd.Context(), c)
			if err != nil {
				return err
			}
			return printNodeStatus(cmd.OutOrStdout(), nodeStatusEntries(readRecords(cmd, targets, name, leaders), leaders), output)
		},
	}
	addRolloutFlag(cmd, &named, "only this NodeWright or Skyhook")
	return cmd
}

func nodeStatusEntries(records []nodeRecord, leaders map[string]skyhookv1.RolloutKind) []nodeStatusEntry {
	entries := []nodeStatusEntry{}
	for _, r := range records {
		status, complete, _ := r.summary()
		e := nodeStatusEntry{NodeName: r.node.Name, SkyhookName: r.ref.Name, Kind: leaderKindWord(leaders, r.ref.Name, r.ref.Kind.Kind),
			Status: status, PackagesComplete: complete, PackagesTotal: len(r.state),
			Cordoned: r.node.Spec.Unschedulable, RuntimeRequiredCordon: runtimeRequiredCordon(r.node)}
		for _, p := range r.packages() {
			e.Packages = append(e.Packages, nodeStatusPackage{Name: p.Name, Version: p.Version, Stage: string(p.Stage), State: string(p.State),
				Restarts: p.Restarts, Image: p.Image})
		}
		entries = append(entries, e)
	}
	return entries
}

func printNodeStatus(w io.Writer, entries []nodeStatusEntry, output string) error {
	if done, err := printStructured(w, output, entries); done {
		return err
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "No Skyhook activity found on specified nodes")
		return err
	}
	cordons := func(e nodeStatusEntry) []string {
		return []string{strconv.FormatBool(e.Cordoned), strconv.FormatBool(e.RuntimeRequiredCordon)}
	}
	var rows [][]string
	if output == "wide" {
		for _, e := range entries {
			for _, p := range e.Packages {
				rows = append(rows, append([]string{e.NodeName, e.SkyhookName, p.Name, p.Version, p.Stage, p.State, strconv.Itoa(int(p.Restarts)), p.Image}, cordons(e)...))
			}
		}
		return printColumns(w, []string{"NODE", "SKYHOOK", "PACKAGE", "VERSION", "STAGE", "STATE", "RESTARTS", "IMAGE", "CORDONED", "RUNTIME-REQUIRED-CORDON"}, rows)
	}
	for _, e := range entries {
		rows = append(rows, append([]string{e.NodeName, e.SkyhookName, e.Status, fmt.Sprintf("%d/%d", e.PackagesComplete, e.PackagesTotal)}, cordons(e)...))
	}
	return printColumns(w, []string{"NODE", "SKYHOOK", "STATUS", "PACKAGES", "CORDONED", "RUNTIME-REQUIRED-CORDON"}, rows)
}

// nodeIgnoreCommand sets or removes the ignore label of both kinds,
// skyhook.nvidia.com/ignore=true and nodewright.nvidia.com/ignore=true, on
// the nodes the arguments select: the node is left out of every rollout,
// whichever its kind. It does not ask (as NodeWright's plugin); -y and
// --confirm are accepted and change nothing.
func nodeIgnoreCommand(verb string, set bool) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   verb + " <node>...",
		Short: map[bool]string{true: "Leave nodes out of every NodeWright and Skyhook (they are reported blocked)", false: "Undo ignore"}[set],
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			targets, err := selectNodes(nodes, args)
			if err != nil {
				return err
			}
			return setIgnored(cmd, c, targets, set)
		},
	}
	addConfirmFlags(cmd, &yes)
	cmd.Flags().Lookup("yes").Hidden = true
	cmd.Flags().Lookup("confirm").Hidden = true
	return cmd
}

func setIgnored(cmd *cobra.Command, c client.Client, targets []*corev1.Node, set bool) error {
	out := cmd.OutOrStdout()
	if len(targets) == 0 {
		fmt.Fprintln(out, noNodesMatched)
		return nil
	}
	action, done, already := "Ignoring", "ignored", "already ignored"
	value := any("true")
	if !set {
		action, done, already, value = "Unignoring", "unignored", "not ignored", nil
	}
	fmt.Fprintf(out, "%s %d node(s):\n", action, len(targets))
	for _, n := range targets {
		fmt.Fprintf(out, "  - %s\n", n.Name)
	}
	labels := map[string]any{}
	for _, k := range skyhookv1.RolloutKinds {
		labels[k.IgnoreNodeLabel()] = value
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if err != nil {
		return err
	}
	var failed []string
	changed := 0
	for _, n := range targets {
		if ignoredByAll(n) == set && ignoredByAny(n) == set {
			if !dryRun(cmd) {
				fmt.Fprintf(out, "  %s: %s\n", n.Name, already)
			}
			continue
		}
		if err := c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(n.Name)}, client.RawPatch(types.MergePatchType, patch), withDryRun(cmd)...); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", n.Name, err))
			continue
		}
		changed++
	}
	return reportNodeChanges(cmd, failed, fmt.Sprintf("Successfully %s %d node(s)", done, changed), changed)
}

// ignoredByAll reports whether every kind's ignore label is "true" on the
// node; ignoredByAny whether one is.
func ignoredByAll(n *corev1.Node) bool {
	return !slices.ContainsFunc(skyhookv1.RolloutKinds, func(k skyhookv1.RolloutKind) bool { return n.Labels[k.IgnoreNodeLabel()] != "true" })
}

func ignoredByAny(n *corev1.Node) bool {
	return slices.ContainsFunc(skyhookv1.RolloutKinds, func(k skyhookv1.RolloutKind) bool { return n.Labels[k.IgnoreNodeLabel()] == "true" })
}
