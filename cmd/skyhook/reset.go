package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newResetCommand forgets a rollout's records on every node and, unless
// --skip-batch-reset, asks the operator to start its batches over; with
// --package it forgets one package's entries only (reset_package.go).
func newResetCommand() *cobra.Command {
	var yes, skipBatchReset bool
	var pkg string
	cmd := &cobra.Command{
		Use:   "reset <name>",
		Short: "Forget a NodeWright's or Skyhook's records on every node so that everything reruns, and start its batches over",
		Long: `Acts on the NodeWright of that name, or else the Skyhook (one rollout when
both exist): their records go from every node, under both kinds' keys.
Its cordon stays where it still selects the node (the re-run lifts it); where
no re-run comes (it is gone, or no longer selects the node) its cordon_ mark
goes, and its cordon is lifted unless something else holds the node.
--package <name>[:<version>] forgets only that package's entries and never
resets the batches.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if pkg != "" {
				return resetPackage(cmd, args[0], pkg, yes)
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			scope := readResetScope(cmd, c, args[0], "NodeWright or Skyhook")
			resets, err := planResets(pointers(nodes), scope)
			if err != nil || len(resets) == 0 {
				return noState(cmd, scope, err)
			}
			name := scope.name
			run := resetRun{scope: scope, resets: resets, yes: yes}
			question := fmt.Sprintf("\nThis will remove ALL package state for %s %q on %d node(s).\nAll packages will re-run from the beginning.\n", scope.kind(), name, len(resets))
			if !skipBatchReset {
				run.note = "\nBatch state will also be reset (use --skip-batch-reset to preserve)"
				question += "Batch state will be reset to start from batch 1.\n"
				run.after = batchResetOf(cmd, c, scope)
			}
			run.question = question + "Continue?"
			_, err = runResets(cmd, c, run)
			return err
		},
	}
	addConfirmFlags(cmd, &yes)
	cmd.Flags().BoolVar(&skipBatchReset, "skip-batch-reset", false, "keep the DeploymentPolicy batch state and node order")
	cmd.Flags().StringVar(&pkg, "package", "", "forget only this package's entries, <name> or <name>:<version> (the batch state is kept)")
	return cmd
}
