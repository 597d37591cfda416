package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/webhook/defaults"
)

// newPlanCommand computes, without changing anything, what a rollout would
// do from the cluster as it is, with the reconciler's own decision code.
func newPlanCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plan <skyhook.yaml|nodewright.yaml|name>",
		Short: "Show which nodes would run which stages, in which batches, and which are blocked; changes nothing",
		Long: `Plans a Skyhook or a NodeWright, from a file (its kind as the file says) or
from the cluster by name (the NodeWright of that name, else the Skyhook),
with the reconciler's own decisions: the other rollouts of both kinds go
before it by priority, and its DeploymentPolicy is of its own group.`,
		Args: cobra.ExactArgs(1),
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
			others, err := rollouts.ListAll(cmd.Context(), c)
			if err != nil {
				return err
			}
			policy, err := policyOf(cmd, c, sk)
			if err != nil {
				return err
			}
			var budgets skyhookv1.NodeDisruptionBudgetList
			if err := c.List(cmd.Context(), &budgets); err != nil && !meta.IsNoMatchError(err) {
				return err // a cluster without the CRD has no budgets
			}
			plan, err := reconcile.PlanRollout(sk, reconcile.PlanInput{Nodes: nodes.Items, Policy: policy, Others: values(others),
				RuntimeTaints: stagepod.DefaultRuntimeRequiredTaints(), Budgets: budgets.Items})
			if err != nil {
				return err
			}
			return printPlan(cmd, plan, output)
		},
	}
	return cmd
}

// loadSkyhook reads a rollout, as its view, from a file (a Skyhook or a
// NodeWright, with the defaults admission would add) or from the cluster
// (the object leading the name: the NodeWright, else the Skyhook).
func loadSkyhook(cmd *cobra.Command, c client.Client, arg string) (*skyhookv1.Skyhook, error) {
	if data, err := os.ReadFile(arg); err == nil {
		return rolloutFromFile(arg, data)
	}
	r, err := findRollout(cmd.Context(), c, arg)
	if err != nil {
		return nil, err
	}
	if r.leader == nil {
		return nil, fmt.Errorf("%s is neither a file nor a Skyhook or NodeWright in the cluster", arg)
	}
	return r.leader, nil
}

// rolloutFromFile reads a Skyhook or a NodeWright manifest as its view,
// with the defaults admission would add.
func rolloutFromFile(name string, data []byte) (*skyhookv1.Skyhook, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	k := rollouts.Skyhooks
	if head.Kind == rollouts.NodeWrights.Kind && strings.HasPrefix(head.APIVersion, rollouts.NodeWrights.Group+"/") {
		k = rollouts.NodeWrights
	}
	obj := k.New()
	if err := yaml.UnmarshalStrict(data, obj); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	sk := k.View(obj)
	if k == rollouts.NodeWrights {
		defaults.NodeWright(sk, defaults.Options{})
	} else {
		defaults.Skyhook(sk, defaults.Options{})
	}
	if sk.Spec.Priority == 0 {
		sk.Spec.Priority = 200 // the schema's default
	}
	return sk, nil
}

// policyOf reads the rollout's DeploymentPolicy (of its own group), nil
// for none.
func policyOf(cmd *cobra.Command, c client.Client, sk *skyhookv1.Skyhook) (*skyhookv1.DeploymentPolicy, error) {
	if sk.Spec.DeploymentPolicy == "" {
		return nil, nil
	}
	k := rollouts.Of(sk)
	policy := k.Policy()
	if err := c.Get(cmd.Context(), client.ObjectKey{Name: sk.Spec.DeploymentPolicy}, policy); err != nil {
		return nil, fmt.Errorf("spec.deploymentPolicy %s: %w", sk.Spec.DeploymentPolicy, err)
	}
	return k.PolicyView(policy), nil
}

// values are the rollouts' views as values.
func values(views []*skyhookv1.Skyhook) []skyhookv1.Skyhook {
	out := make([]skyhookv1.Skyhook, len(views))
	for i, v := range views {
		out[i] = *v
	}
	return out
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
