package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// nodeResetCommand forgets a Skyhook's record on the nodes the arguments
// select, so that everything reruns there.
func nodeResetCommand() *cobra.Command {
	var yes bool
	var skyhook string
	cmd := &cobra.Command{
		Use:   "reset <node>... --skyhook <skyhook>",
		Short: "Forget a Skyhook's record on nodes so that its packages run again there; lifts its cordon there",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if skyhook == "" {
				return fmt.Errorf("--skyhook flag is required")
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			targets, err := selectNodes(nodes, args)
			if err != nil {
				return err
			}
			if len(targets) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), noNodesMatched)
				return nil
			}
			sk, _, err := skyhookOrName(cmd, c, skyhook)
			if err != nil {
				return err
			}
			resets, err := planResets(targets, sk)
			if err != nil || len(resets) == 0 {
				return noState(cmd, skyhook, err)
			}
			_, err = runResets(cmd, c, resetRun{skyhook: skyhook, resets: resets, yes: yes,
				question: fmt.Sprintf("\nThis will remove ALL package state for Skyhook %q on these nodes.\nAll packages will re-run from the beginning.\nContinue?", skyhook)})
			return err
		},
	}
	cmd.Flags().StringVar(&skyhook, "skyhook", "", "the Skyhook whose record goes (required)")
	addConfirmFlags(cmd, &yes)
	return cmd
}
