package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"sigs.k8s.io/controller-runtime/pkg/client"

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
		Long: `Prints the client's version and the version the operator publishes (the
ConfigMap skyhook-operator-version) in its namespace: -n, or else the one
found as package logs finds it; every namespace's when none is found.`,
		Args: cobra.NoArgs,
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
			ns := operatorNamespace(ctx, cmd, c)
			versions, err := operatorVersions(ctx, c, ns)
			switch {
			case err != nil:
				fmt.Fprintf(cmd.OutOrStdout(), "operator: unknown (%v)\n", err)
			case len(versions) == 0 && ns != "":
				fmt.Fprintf(cmd.OutOrStdout(), "operator: none running in namespace %s\n", ns)
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

// operatorVersions are the versions the operators published: the one of
// the namespace (none when it publishes none there), or every namespace's
// when ns is "".
func operatorVersions(ctx context.Context, c client.Client, ns string) (map[string]string, error) {
	if ns == "" {
		return operator.ClusterVersions(ctx, c)
	}
	var cm corev1.ConfigMap
	err := c.Get(ctx, client.ObjectKey{Namespace: ns, Name: operator.VersionConfigMap}, &cm)
	if apierrors.IsNotFound(err) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return map[string]string{ns: cm.Data["version"]}, nil
}

func clientVersion() string {
	if version != "" {
		return version
	}
	return operator.BuildVersion()
}
