// Command skyhook is the Skyhook CLI; installed as kubectl-skyhook, or as
// kubectl-nodewright (NodeWright's plugin's name, for its users' scripts),
// it is also the kubectl plugin `kubectl skyhook` or `kubectl nodewright`.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	root := newRootCommand()
	asKubectlPlugin(root, os.Args[0])
	if err := root.ExecuteContext(ctx); err != nil {
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
		Version:       clientVersion(),
	}
	// skyhook --version, as NodeWright's plugin prints it.
	root.SetVersionTemplate("Skyhook plugin: {{.Version}}\n")
	root.AddCommand(newSandboxCommand(), newVersionCommand(), newValidateCommand(), newPushCommand(), newPullCommand(), newGetCommand(), newReconcileCommand(), newStatusCommand(),
		newNodeCommand(), newResetCommand(), newDeploymentPolicyCommand(), newPlanCommand(), newPackageCommand(), newUpdateStateCommand())
	root.AddCommand(newSteeringCommands()...)
	addKubeFlags(root)
	addGlobalFlags(root)
	return root
}

// asKubectlPlugin makes help and usage say `kubectl skyhook` (`kubectl
// nodewright`) when kubectl runs the binary as its plugin kubectl-skyhook
// (kubectl-nodewright): kubectl finds plugins on the PATH by that name.
// As kubectl-nodewright, --version prints what NodeWright's plugin prints
// since it was renamed (CLI v0.3.0).
func asKubectlPlugin(root *cobra.Command, argv0 string) {
	name, ok := strings.CutPrefix(filepath.Base(argv0), "kubectl-")
	if !ok {
		return
	}
	root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl " + name}
	if name == "nodewright" {
		root.SetVersionTemplate("NodeWright plugin: {{.Version}}\n")
	}
}
