// Command skyhook is the Skyhook CLI; installed as kubectl-skyhook it is also
// the kubectl plugin `kubectl skyhook`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	if err := newRootCommand().ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "Error:", err)
		os.Exit(1)
	}
}

func newRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "skyhook",
		Short:         "Skyhook: a package manager for the host OS of every node in a Kubernetes cluster",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(newSandboxCommand(), newVersionCommand(), newValidateCommand(), newPushCommand(), newPullCommand(), newGetCommand(), newReconcileCommand(), newStatusCommand(),
		newNodeCommand(), newResetCommand(), newPlanCommand(), newPackageCommand())
	root.AddCommand(newSteeringCommands()...)
	addKubeFlags(root)
	return root
}
