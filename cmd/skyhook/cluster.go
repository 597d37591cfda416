package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
)

// kubeFlags are kubectl's connection flags (--kubeconfig, --context, -n,
// ...), through cli-runtime, for the commands that talk to a cluster. They
// belong to the last root command made (one per process, or per test).
var kubeFlags *genericclioptions.ConfigFlags

// addKubeFlags puts kubectl's connection flags on the root command.
func addKubeFlags(root *cobra.Command) {
	kubeFlags = genericclioptions.NewConfigFlags(true)
	foundNamespace = nil // the operator's namespace is found again
	kubeFlags.AddFlags(root.PersistentFlags())
}

// kubeClient is a client for the cluster the flags name, and the namespace
// they select (the kubeconfig's, or default).
func kubeClient() (client.Client, string, error) { return kubeClientWithin(0) }

// kubeClientWithin is kubeClient whose every request ends within timeout
// (no limit when 0), discovery included.
func kubeClientWithin(timeout time.Duration) (client.Client, string, error) {
	cfg, err := kubeFlags.ToRESTConfig()
	if err != nil {
		return nil, "", fmt.Errorf("reading the kubeconfig: %w", err)
	}
	cfg = rest.CopyConfig(cfg)
	cfg.Timeout = timeout
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return nil, "", err
	}
	ns, _, err := kubeFlags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, "", err
	}
	return c, ns, nil
}

// objectMeta names a cluster-scoped object.
func objectMeta(name string) metav1.ObjectMeta { return metav1.ObjectMeta{Name: name} }

// clusterNode is a client and the named node.
func clusterNode(cmd *cobra.Command, name string) (client.Client, *corev1.Node, error) {
	c, _, err := kubeClient()
	if err != nil {
		return nil, nil, err
	}
	n := &corev1.Node{}
	if err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, n); err != nil {
		return nil, nil, err
	}
	return c, n, nil
}

// clusterNodes is a client and every node of the cluster.
func clusterNodes(cmd *cobra.Command) (client.Client, []corev1.Node, error) {
	c, _, err := kubeClient()
	if err != nil {
		return nil, nil, err
	}
	var nodes corev1.NodeList
	if err := c.List(cmd.Context(), &nodes); err != nil {
		return nil, nil, err
	}
	return c, nodes.Items, nil
}
