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

// nodeList is `node list` of one Skyhook.
type nodeList struct {
	SkyhookName string          `json:"skyhookName"`
	Nodes       []nodeListEntry `json:"nodes"`
}

func nodeListCommand() *cobra.Command {
	var skyhook string
	cmd := &cobra.Command{
		Use:   "list [--skyhook S]",
		Short: "The nodes with a record of a Skyhook (of each Skyhook without --skyhook) and where they stand",
		Long: `Prints, per Skyhook, a summary and its nodes: the status derived from the
node's record (erroring, complete, in_progress or unknown), complete packages
out of all, and with -o wide the restarts and whether the node is ignored.
-o table|wide|json|yaml.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			_, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			lists := []nodeList{}
			byName := map[string]int{}
			if skyhook != "" {
				lists, byName[skyhook] = append(lists, nodeList{SkyhookName: skyhook, Nodes: []nodeListEntry{}}), 0
			}
			for _, r := range readRecords(cmd, pointers(nodes), skyhook) {
				i, ok := byName[r.skyhook]
				if !ok {
					i = len(lists)
					byName[r.skyhook] = i
					lists = append(lists, nodeList{SkyhookName: r.skyhook, Nodes: []nodeListEntry{}})
				}
				status, complete, restarts := r.summary()
				lists[i].Nodes = append(lists[i].Nodes, nodeListEntry{NodeName: r.node.Name, Status: status, PackagesComplete: complete,
					PackagesTotal: len(r.state), Restarts: restarts, Ignored: r.node.Labels[skyhookv1.IgnoreNodeLabel] == "true"})
			}
			slices.SortFunc(lists, func(a, b nodeList) int { return strings.Compare(a.SkyhookName, b.SkyhookName) })
			if skyhook != "" {
				return printNodeList(cmd.OutOrStdout(), lists[0], output)
			}
			if done, err := printStructured(cmd.OutOrStdout(), output, lists); done {
				return err
			}
			if len(lists) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No Skyhook has a record on any node")
			}
			for i, l := range lists {
				if i > 0 {
					fmt.Fprintln(cmd.OutOrStdout())
				}
				if err := printNodeList(cmd.OutOrStdout(), l, output); err != nil {
					return err
				}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "the Skyhook (without it, every Skyhook with a record on a node, one after the other)")
	return cmd
}

// printNodeList prints one Skyhook's nodes as NodeWright's plugin does.
func printNodeList(w io.Writer, l nodeList, output string) error {
	if done, err := printStructured(w, output, l); done {
		return err
	}
	if len(l.Nodes) == 0 {
		_, err := fmt.Fprintf(w, "No nodes found for Skyhook %q\n", l.SkyhookName)
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
	fmt.Fprintf(w, "Skyhook: %s\n\nSummary: %d nodes (%d complete, %d erroring, %d in progress)\n\n",
		l.SkyhookName, len(l.Nodes), complete, erroring, len(l.Nodes)-complete-erroring)
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

// nodeStatusEntry is one Skyhook on one node, as NodeWright's plugin's
// `node status` prints it.
type nodeStatusEntry struct {
	NodeName         string              `json:"nodeName"`
	SkyhookName      string              `json:"skyhookName"`
	Status           string              `json:"status"`
	PackagesComplete int                 `json:"packagesComplete"`
	PackagesTotal    int                 `json:"packagesTotal"`
	Packages         []nodeStatusPackage `json:"packages,omitempty"`
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
	var skyhook string
	cmd := &cobra.Command{
		Use:   "status [node...] [--skyhook S]",
		Short: "Every Skyhook's record on the nodes (on every node without arguments)",
		Long: `Prints a row per Skyhook and node: the status derived from the record and
the complete packages out of all; -o wide prints a row per package instead
(version, stage, state, restarts, image). -o table|wide|json|yaml.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			_, nodes, err := clusterNodes(cmd)
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
			entries := []nodeStatusEntry{}
			for _, r := range readRecords(cmd, targets, skyhook) {
				status, complete, _ := r.summary()
				e := nodeStatusEntry{NodeName: r.node.Name, SkyhookName: r.skyhook, Status: status, PackagesComplete: complete, PackagesTotal: len(r.state)}
				for _, p := range r.packages() {
					e.Packages = append(e.Packages, nodeStatusPackage{Name: p.Name, Version: p.Version, Stage: string(p.Stage), State: string(p.State),
						Restarts: p.Restarts, Image: p.Image})
				}
				entries = append(entries, e)
			}
			return printNodeStatus(cmd.OutOrStdout(), entries, output)
		},
	}
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "only this Skyhook")
	return cmd
}

func printNodeStatus(w io.Writer, entries []nodeStatusEntry, output string) error {
	if done, err := printStructured(w, output, entries); done {
		return err
	}
	if len(entries) == 0 {
		_, err := fmt.Fprintln(w, "No Skyhook activity found on specified nodes")
		return err
	}
	var rows [][]string
	if output == "wide" {
		for _, e := range entries {
			for _, p := range e.Packages {
				rows = append(rows, []string{e.NodeName, e.SkyhookName, p.Name, p.Version, p.Stage, p.State, strconv.Itoa(int(p.Restarts)), p.Image})
			}
		}
		return printColumns(w, []string{"NODE", "SKYHOOK", "PACKAGE", "VERSION", "STAGE", "STATE", "RESTARTS", "IMAGE"}, rows)
	}
	for _, e := range entries {
		rows = append(rows, []string{e.NodeName, e.SkyhookName, e.Status, fmt.Sprintf("%d/%d", e.PackagesComplete, e.PackagesTotal)})
	}
	return printColumns(w, []string{"NODE", "SKYHOOK", "STATUS", "PACKAGES"}, rows)
}

// nodeIgnoreCommand sets or removes skyhook.nvidia.com/ignore=true on the
// nodes the arguments select. It does not ask (as NodeWright's plugin);
// -y and --confirm are accepted and change nothing.
func nodeIgnoreCommand(verb string, set bool) *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   verb + " <node>...",
		Short: map[bool]string{true: "Leave nodes out of every Skyhook (they are reported blocked)", false: "Undo ignore"}[set],
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
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{skyhookv1.IgnoreNodeLabel: value}}})
	if err != nil {
		return err
	}
	var failed []string
	changed := 0
	for _, n := range targets {
		if (n.Labels[skyhookv1.IgnoreNodeLabel] == "true") == set {
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
