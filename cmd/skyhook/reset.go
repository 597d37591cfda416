package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// newResetCommand forgets a Skyhook's records on every node and, unless
// --skip-batch-reset, asks the operator to start its batches over.
func newResetCommand() *cobra.Command {
	var yes, skipBatchReset bool
	cmd := &cobra.Command{
		Use:   "reset <skyhook>",
		Short: "Forget a Skyhook's records on every node so that everything reruns; lifts its cordons and starts its batches over",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			sk, exists, err := skyhookOrName(cmd, c, name)
			if err != nil {
				return err
			}
			resets, err := planResets(pointers(nodes), sk)
			if err != nil || len(resets) == 0 {
				return noState(cmd, name, err)
			}
			run := resetRun{skyhook: name, resets: resets, yes: yes}
			question := fmt.Sprintf("\nThis will remove ALL package state for Skyhook %q on %d node(s).\nAll packages will re-run from the beginning.\n", name, len(resets))
			if !skipBatchReset {
				run.note = "\nBatch state will also be reset (use --skip-batch-reset to preserve)"
				question += "Batch state will be reset to start from batch 1.\n"
				run.after = batchReset(cmd, c, sk, exists, "its batches and node order")
			}
			run.question = question + "Continue?"
			_, err = runResets(cmd, c, run)
			return err
		},
	}
	addConfirmFlags(cmd, &yes)
	cmd.Flags().BoolVar(&skipBatchReset, "skip-batch-reset", false, "keep the Skyhook's DeploymentPolicy batch state and node order")
	return cmd
}
