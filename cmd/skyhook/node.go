package main

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"text/tabwriter"

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
	var skyhook string
	list := &cobra.Command{
		Use:   "list",
		Short: "Nodes and each Skyhook's status on them",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NODE\tSKYHOOK\tSTATUS\tIGNORED")
			for _, n := range nodes {
				for _, sk := range skyhooksOn(&n) {
					if skyhook != "" && sk != skyhook {
						continue
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%t\n", n.Name, sk, n.Labels[skyhookv1.StatusKey(sk)], n.Labels[skyhookv1.IgnoreNodeLabel] == "true")
				}
			}
			return tw.Flush()
		},
	}
	list.Flags().StringVar(&skyhook, "skyhook", "", "only this Skyhook")
	status := &cobra.Command{
		Use:   "status <node>",
		Short: "Every package record of every Skyhook on a node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			n := &corev1.Node{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, n); err != nil {
				return err
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "SKYHOOK\tPACKAGE\tVERSION\tSTAGE\tSTATE\tRESTARTS")
			for _, sk := range skyhooksOn(n) {
				state, err := nodestate.Read(n, sk)
				if err != nil {
					fmt.Fprintf(tw, "%s\t(unreadable record: %v)\t\t\t\t\n", sk, err)
					continue
				}
				keys := make([]string, 0, len(state))
				for k := range state {
					keys = append(keys, k)
				}
				sort.Strings(keys)
				for _, k := range keys {
					e := state[k]
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\n", sk, e.Name, e.Version, e.Stage, e.State, e.Restarts)
				}
			}
			return tw.Flush()
		},
	}
	cmd.AddCommand(list, status, nodeLabelCommand("ignore", true), nodeLabelCommand("unignore", false), nodeResetCommand())
	return cmd
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
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			n := &corev1.Node{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, n); err != nil {
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
