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
	cmd := &cobra.Command{Use: "deployment-policy", Aliases: []string{"dp"}, Short: "Steer a Skyhook's DeploymentPolicy batches"}
	var yes bool
	reset := &cobra.Command{
		Use:   "reset <skyhook>",
		Short: "Start a Skyhook's DeploymentPolicy batches over from batch 1 (and its node order)",
		Long: `Asks the operator, through the annotation skyhook.nvidia.com/reset-batch-state,
to start the Skyhook's batches over in every compartment (batch 1, no
failures, not halted) and to clear its node order (nodePriority,
nodeOrderOffset). The operator removes the annotation once it has.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			sk := &skyhookv1.Skyhook{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, sk); err != nil {
				return fmt.Errorf("getting skyhook %q: %w", args[0], err)
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
		fmt.Fprintf(out, "Skyhook %q has no compartment statuses to reset\n", sk.Name)
		return nil
	}
	withState := 0
	for _, cp := range compartments {
		if cp.BatchState != nil {
			withState++
		}
	}
	fmt.Fprintf(out, "Skyhook: %s\nCompartments: %d total, %d with batch state\n", sk.Name, len(compartments), withState)
	if withState > 0 {
		fmt.Fprintf(out, "\nCurrent batch state:\n")
		for _, name := range slices.Sorted(maps.Keys(compartments)) {
			if b := compartments[name].BatchState; b != nil {
				fmt.Fprintf(out, "  - %s: batch %d, %d completed, %d failed\n", name, b.CurrentBatch, b.CompletedNodes, b.FailedNodes)
			}
		}
	}
	request := batchReset(cmd, c, sk, true, "it from batch 1")
	if dryRun(cmd) {
		if err := request(client.DryRunAll); err != nil {
			return err
		}
		fmt.Fprintf(out, "\n[dry-run] Would reset batch state to:\n  - CurrentBatch: 1\n  - ConsecutiveFailures: 0\n  - ShouldStop: false\n"+
			"  - nodePriority and nodeOrderOffset cleared\n\n[dry-run] No changes applied\n")
		return nil
	}
	if !confirmed(cmd, yes, fmt.Sprintf("\nThis will reset the batch state for Skyhook %q.\nThe next reconciliation will start from batch 1.\nContinue?", sk.Name)) {
		return nil
	}
	fmt.Fprintln(out)
	return request()
}
