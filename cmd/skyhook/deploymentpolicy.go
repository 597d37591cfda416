package main

import (
	"fmt"
	"maps"
	"slices"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// newDeploymentPolicyCommand is `deployment-policy` (`dp`): reset asks the
// operator to start a Skyhook's batches over.
func newDeploymentPolicyCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "deployment-policy", Aliases: []string{"dp"}, Short: "Steer a NodeWright's or Skyhook's DeploymentPolicy batches"}
	var yes bool
	reset := &cobra.Command{
		Use:   "reset <name>",
		Short: "Start a NodeWright's or Skyhook's DeploymentPolicy batches over from batch 1 (and its node order)",
		Long: `Asks the operator, through the annotation <prefix>/reset-batch-state
(nodewright.nvidia.com/ on a NodeWright, skyhook.nvidia.com/ on a Skyhook),
to start the rollout's batches over in every compartment (batch 1, no
failures, not halted) and to clear its node order (nodePriority,
nodeOrderOffset). The operator removes the annotation once it has. Acts on
the NodeWright of that name, or else the Skyhook.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			sk, err := existingRollout(cmd.Context(), c, args[0])
			if err != nil {
				return err
			}
			return resetBatches(cmd, c, sk, yes)
		},
	}
	addConfirmFlags(reset, &yes)
	cmd.AddCommand(reset)
	return cmd
}

// resetBatches shows the Skyhook's batch state and, once confirmed, asks
// the operator to start its batches over.
func resetBatches(cmd *cobra.Command, c client.Client, sk *skyhookv1.Skyhook, yes bool) error {
	out := cmd.OutOrStdout()
	compartments := sk.Status.CompartmentStatuses
	if len(compartments) == 0 {
		fmt.Fprintf(out, "%s %q has no compartment statuses to reset\n", kindOf(sk), sk.Name)
		return nil
	}
	withState := 0
	for _, cp := range compartments {
		if cp.BatchState != nil {
			withState++
		}
	}
	fmt.Fprintf(out, "%s: %s\nCompartments: %d total, %d with batch state\n", kindOf(sk), sk.Name, len(compartments), withState)
	if withState > 0 {
		fmt.Fprintf(out, "\nCurrent batch state:\n")
		for _, name := range slices.Sorted(maps.Keys(compartments)) {
			if b := compartments[name].BatchState; b != nil {
				fmt.Fprintf(out, "  - %s: batch %d, %d completed, %d failed\n", name, b.CurrentBatch, b.CompletedNodes, b.FailedNodes)
			}
		}
	}
	request := batchReset(cmd, c, sk, "it from batch 1")
	if dryRun(cmd) {
		if err := request(client.DryRunAll); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n[dry-run] Would reset batch state to:\n  - CurrentBatch: 1\n  - ConsecutiveFailures: 0\n  - ShouldStop: false\n"+
			"  - nodePriority and nodeOrderOffset cleared\n\n[dry-run] No changes applied\n")
		return nil
	}
	if !confirmed(cmd, yes, fmt.Sprintf("\nThis will reset the batch state for %s %q.\nThe next reconciliation will start from batch 1.\nContinue?", kindOf(sk), sk.Name)) {
		return nil
	}
	fmt.Fprintln(out)
	return request()
}
