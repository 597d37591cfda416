package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/webhook/defaults"
)

// newPlanCommand computes, without changing anything, what a rollout would
// do from the cluster as it is, with the reconciler's own decision code.
func newPlanCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan <skyhook.yaml|skyhook-name>",
		Short: "Show which nodes would run which stages, in which batches, and which are blocked; changes nothing",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, planFormats)
			if err != nil {
				return err
			}
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			sk, err := loadSkyhook(cmd, c, args[0])
			if err != nil {
				return err
			}
			var nodes corev1.NodeList
			if err := c.List(cmd.Context(), &nodes); err != nil {
				return err
			}
			var others skyhookv1.SkyhookList
			if err := c.List(cmd.Context(), &others); err != nil {
				return err
			}
			var policy *skyhookv1.DeploymentPolicy
			if sk.Spec.DeploymentPolicy != "" {
				policy = &skyhookv1.DeploymentPolicy{}
				if err := c.Get(cmd.Context(), client.ObjectKey{Name: sk.Spec.DeploymentPolicy}, policy); err != nil {
					return fmt.Errorf("spec.deploymentPolicy %s: %w", sk.Spec.DeploymentPolicy, err)
				}
			}
			plan, err := reconcile.PlanRollout(sk, nodes.Items, policy, others.Items, stagepod.DefaultRuntimeRequiredTaint)
			if err != nil {
				return err
			}
			return printPlan(cmd, plan, output)
		},
	}
	return cmd
}

// loadSkyhook reads a Skyhook from a file (with the defaults admission
// would add) or from the cluster.
func loadSkyhook(cmd *cobra.Command, c client.Client, arg string) (*skyhookv1.Skyhook, error) {
	sk := &skyhookv1.Skyhook{}
	if data, err := os.ReadFile(arg); err == nil {
		if err := yaml.UnmarshalStrict(data, sk); err != nil {
			return nil, fmt.Errorf("%s: %w", arg, err)
		}
		defaults.Skyhook(sk, defaults.Options{})
		if sk.Spec.Priority == 0 {
			sk.Spec.Priority = 200 // the schema's default
		}
		return sk, nil
	}
	if err := c.Get(cmd.Context(), client.ObjectKey{Name: arg}, sk); err != nil {
		return nil, fmt.Errorf("%s is neither a file nor a Skyhook in the cluster: %w", arg, err)
	}
	return sk, nil
}

func printPlan(cmd *cobra.Command, plan *reconcile.Plan, output string) error {
	w := cmd.OutOrStdout()
	if done, err := printStructured(w, output, plan); done {
		return err
	}
	lines := []string{"COMPARTMENT\tBATCH\tNODE\tSTAGES\tINTERRUPT"}
	for _, b := range plan.Batches {
		comp := b.Compartment
		if comp == "" {
			comp = "-"
		}
		for _, n := range b.Nodes {
			lines = append(lines, fmt.Sprintf("%s\t%d\t%s\t%s\t%s", comp, b.Number, n.Name, strings.Join(n.Stages, "; "), orDash(n.Interrupt)))
		}
	}
	if err := printTable(w, lines...); err != nil {
		return err
	}
	if len(plan.Batches) == 0 && len(plan.Complete) == 0 && len(plan.Blocked) == 0 {
		fmt.Fprintln(w, "\nNo node matches the Skyhook's nodeSelectors: nothing would run.")
	}
	if len(plan.Complete) > 0 {
		fmt.Fprintf(w, "\nComplete, nothing to do: %s\n", strings.Join(plan.Complete, ", "))
	}
	if len(plan.Blocked) > 0 {
		fmt.Fprintln(w, "\nBlocked:")
		for _, b := range plan.Blocked {
			fmt.Fprintf(w, "  %s  %s\n", b.Name, b.Message)
		}
	}
	return nil
}
