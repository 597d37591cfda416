package main

import (
	"fmt"

	"github.com/spf13/cobra"
)

// nodeResetCommand forgets a rollout's record on the nodes the arguments
// select, so that everything reruns there.
func nodeResetCommand() *cobra.Command {
	var yes bool
	var named rolloutFlag
	cmd := &cobra.Command{
		Use:   "reset <node>... --nodewright <name>",
		Short: "Forget a NodeWright's or Skyhook's record on nodes so that its packages run again there",
		Long: `The record goes under both kinds' keys. The rollout's cordon stays where it
still selects the node (the re-run lifts it); where no re-run comes (it is
gone, or no longer selects the node) its cordon_ mark goes, and its cordon is
lifted unless something else holds the node.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := named.required()
			if err != nil {
				return err
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
			scope := readResetScope(cmd, c, name, named.kindWord())
			resets, err := planResets(targets, scope)
			if err != nil || len(resets) == 0 {
				return noState(cmd, scope, err)
			}
			_, err = runResets(cmd, c, resetRun{scope: scope, resets: resets, yes: yes,
				question: fmt.Sprintf("\nThis will remove ALL package state for %s %q on these nodes.\nAll packages will re-run from the beginning.\nContinue?", scope.kind(), name)})
			return err
		},
	}
	addRolloutFlag(cmd, &named, "the NodeWright or Skyhook whose record goes (required)")
	addConfirmFlags(cmd, &yes)
	return cmd
}
