package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/nodestate"
)

// newPackageCommand groups what concerns one package: status, logs and
// rerun.
func newPackageCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "package", Short: "See, read the logs of and rerun a package on nodes"}
	var skyhook, output string
	status := &cobra.Command{
		Use:   "status <package>",
		Short: "The package's record on every node",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkOutput(output, listFormats); err != nil {
				return err
			}
			_, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			rows := []recordRow{}
			for i := range nodes {
				for _, sk := range skyhooksOn(&nodes[i]) {
					if skyhook == "" || sk == skyhook {
						for _, r := range records(&nodes[i], sk, args[0]) {
							if r.Error == "" { // a record that cannot be read has no package to show
								rows = append(rows, r)
							}
						}
					}
				}
			}
			return printRecordRows(cmd.OutOrStdout(), rows, output, "NODE\tSKYHOOK", func(r recordRow) string { return r.Node + "\t" + r.Skyhook })
		},
	}
	status.Flags().StringVar(&skyhook, "skyhook", "", "only this Skyhook")
	addOutputFlag(status, &output, listFormats)
	cmd.AddCommand(status, newLogsCommand(), newRerunCommand())
	return cmd
}

// newRerunCommand makes the operator run a package again on a node: from
// the start (its record goes), or from one stage.
func newRerunCommand() *cobra.Command {
	var node, skyhook, stage string
	var yes, dryRun bool
	cmd := &cobra.Command{
		Use:   "rerun <package> --node N --skyhook S [--stage STAGE]",
		Short: "Run a package again on a node, from the start or from one stage",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if node == "" || skyhook == "" {
				return fmt.Errorf("--node and --skyhook: required")
			}
			if stage != "" && !validStage(stage) {
				return fmt.Errorf("--stage %q: want apply, config, upgrade, interrupt, post-interrupt or uninstall", stage)
			}
			c, n, err := clusterNode(cmd, node)
			if err != nil {
				return err
			}
			state, err := nodestate.Read(n, skyhook)
			if err != nil {
				return err
			}
			found := false
			for k, e := range state {
				if e.Name != args[0] {
					continue
				}
				found = true
				if stage == "" {
					delete(state, k) // no record: the operator installs it again
					continue
				}
				e.Stage, e.State, e.Restarts = skyhookv1.Stage(stage), skyhookv1.StateInProgress, 0
				state[k] = e // a stage in progress without its pod: the operator starts one
			}
			if !found {
				return fmt.Errorf("node %s has no record of package %s for Skyhook %s", node, args[0], skyhook)
			}
			encoded, err := json.Marshal(state)
			if err != nil {
				return err
			}
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{skyhookv1.NodeStateAnnotation(skyhook): string(encoded)}}})
			what := fmt.Sprintf("rerun package %s of Skyhook %s on node %s from the start", args[0], skyhook, node)
			if stage != "" {
				what = fmt.Sprintf("rerun package %s of Skyhook %s on node %s from stage %s", args[0], skyhook, node, stage)
			}
			return applyChange(cmd, what, yes, dryRun, func(opts ...client.PatchOption) error {
				return c.Patch(cmd.Context(), &corev1.Node{ObjectMeta: objectMeta(node)}, client.RawPatch(types.MergePatchType, patch), opts...)
			})
		},
	}
	cmd.Flags().StringVar(&node, "node", "", "the node")
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "the Skyhook of the package")
	cmd.Flags().StringVar(&stage, "stage", "", "rerun from this stage (apply, config, upgrade, interrupt, post-interrupt, uninstall) instead of from the start")
	addChangeFlags(cmd, &yes, &dryRun)
	return cmd
}
