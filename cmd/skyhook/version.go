package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = ""

func newVersionCommand() *cobra.Command {
	var clientOnly bool
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the client version, and the operator's when a cluster is reachable",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "client: %s\n", clientVersion())
			if clientOnly {
				return nil
			}
			c, _, err := kubeClientWithin(timeout)
			if err != nil {
				fmt.Fprintf(cmd.OutOrStdout(), "operator: unknown (%v)\n", err)
				return nil
			}
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout) // a missing cluster must not hang it
			defer cancel()
			versions, err := operator.ClusterVersions(ctx, c)
			switch {
			case err != nil:
				fmt.Fprintf(cmd.OutOrStdout(), "operator: unknown (%v)\n", err)
			case len(versions) == 0:
				fmt.Fprintln(cmd.OutOrStdout(), "operator: none running in the cluster")
			}
			for ns, v := range versions {
				fmt.Fprintf(cmd.OutOrStdout(), "operator: %s (namespace %s)\n", v, ns)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&clientOnly, "client", false, "only the client's version")
	cmd.Flags().BoolVar(&clientOnly, "client-only", false, "the same as --client, as NodeWright's kubectl plugin spells it")
	cmd.Flags().DurationVar(&timeout, "timeout", 10*time.Second, "how long to wait for the cluster's answer")
	return cmd
}

func clientVersion() string {
	if version != "" {
		return version
	}
	return operator.BuildVersion()
}
