package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	appsv1 "k8s.io/api/apps/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
)

// The operator's namespace: where its stage pods run (package logs) and
// it publishes its version (version). -n is used as given. Without it the
// namespace is found as NodeWright's plugin finds it, so that its users'
// scripts, which pass no -n, find an install wherever it is:
//
//  1. nodewright, NodeWright's namespace since its v0.18;
//  2. skyhook, NodeWright's before v0.18 and this project's Helm example,
//     with a one-line note on stderr (-n skyhook silences it);
//  3. skyhook-system, this project's kustomize bases and sandbox;
//  4. every namespace, for an install elsewhere (skipped, silently, when
//     Deployments may not be listed cluster-wide);
//  5. none found: the command looks in every namespace (NodeWright's
//     falls back to nodewright and reports a miss there).
//
// An operator is a Deployment labelled control-plane=controller-manager
// (both charts' and kustomize bases' label) whose image or labels name
// skyhook or nodewright. The answer holds for the rest of the invocation.

// probedNamespaces are steps 1 to 3, in order.
var probedNamespaces = []string{"nodewright", "skyhook", operator.DefaultNamespace}

// legacyNamespace is the one found with a note.
const legacyNamespace = "skyhook"

// operatorSelector narrows a Deployment list to controller managers: any
// Deployment mentioning skyhook would do for a namespace the user named,
// not to choose one.
var operatorSelector = client.MatchingLabels{"control-plane": "controller-manager"}

// foundNamespace caches the namespace found (nil: not looked for yet) for
// the last root command made (addKubeFlags resets it).
var foundNamespace *string

// operatorNamespace is -n, or the namespace the operator was found in, or
// "" for every namespace.
func operatorNamespace(ctx context.Context, cmd *cobra.Command, c client.Client) string {
	if ns := *kubeFlags.Namespace; ns != "" {
		return ns
	}
	if foundNamespace == nil {
		ns := findOperatorNamespace(ctx, c)
		if ns == legacyNamespace {
			fmt.Fprintf(cmd.ErrOrStderr(), "Note: using the operator in namespace %q (NodeWright's before v0.18; new NodeWright installs use \"nodewright\"); -n %s skips the search and this note\n",
				ns, ns)
		}
		foundNamespace = &ns
	}
	return *foundNamespace
}

// findOperatorNamespace runs steps 1 to 5.
func findOperatorNamespace(ctx context.Context, c client.Client) string {
	for _, ns := range probedNamespaces {
		if found, _ := operatorIn(ctx, c, ns); len(found) > 0 {
			return ns
		}
	}
	found, err := operatorIn(ctx, c, "")
	if err != nil || len(found) == 0 {
		return ""
	}
	return found[0]
}

// operatorIn are the namespaces, sorted, with an operator Deployment, in ns
// ("" for every namespace).
func operatorIn(ctx context.Context, c client.Client, ns string) ([]string, error) {
	var list appsv1.DeploymentList
	if err := c.List(ctx, &list, client.InNamespace(ns), operatorSelector); err != nil {
		return nil, err
	}
	var out []string
	for i := range list.Items {
		if d := &list.Items[i]; isOperator(d) && !slices.Contains(out, d.Namespace) {
			out = append(out, d.Namespace)
		}
	}
	slices.Sort(out)
	return out, nil
}

// isOperator reports whether the Deployment's images or labels name
// skyhook or nodewright (the images of both projects, and their charts'
// app.kubernetes.io labels, do).
func isOperator(d *appsv1.Deployment) bool {
	names := func(s string) bool {
		s = strings.ToLower(s)
		return strings.Contains(s, "skyhook") || strings.Contains(s, "nodewright")
	}
	for _, c := range d.Spec.Template.Spec.Containers {
		if names(c.Image) {
			return true
		}
	}
	for k, v := range d.Labels {
		if names(k) || names(v) {
			return true
		}
	}
	return false
}
