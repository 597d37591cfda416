package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func newStatusCommand() *cobra.Command {
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status <name>",
		Short: "A NodeWright's or Skyhook's rollout: per package and compartment, and the nodes that need attention",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, viewFormats)
			if err != nil {
				return err
			}
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			for {
				view, err := readStatus(cmd.Context(), c, args[0])
				if err != nil {
					return err
				}
				if err := printStatus(cmd.OutOrStdout(), view, output); err != nil {
					return err
				}
				if !watch {
					return nil
				}
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(interval):
					if output == "table" {
						fmt.Fprintln(cmd.OutOrStdout())
					}
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print again every --interval until interrupted (with -o json, one document each time)")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often -w prints")
	return cmd
}

// statusView is what `status` shows, also as an object for -o json|yaml.
type statusView struct {
	Name            string `json:"name"`
	Kind            string `json:"kind"`
	Status          string `json:"status"`
	CompleteNodes   string `json:"completeNodes"`
	NodesInProgress int    `json:"nodesInProgress"`
	Ready           string `json:"ready"`
	Message         string `json:"message"`
	// Blocking are the conditions that hold the rollout back and are True.
	Blocking              []conditionView               `json:"blocking"`
	Packages              []packageProgress             `json:"packages"`
	Compartments          []skyhookv1.CompartmentStatus `json:"compartments"`
	NodesNeedingAttention []skyhookv1.NodeAttention     `json:"nodesNeedingAttention"`
}

type conditionView struct {
	Type    string `json:"type"`
	Message string `json:"message"`
}

// packageProgress counts a package's selected nodes by where they stand.
type packageProgress struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Nodes    int    `json:"nodes"`
	Complete int    `json:"complete"`
	Erroring int    `json:"erroring"`
	// InProgress counts nodes per stage they are in.
	InProgress map[string]int `json:"inProgress"`
}

// readStatus reads the rollout (the NodeWright of the name, or else the
// Skyhook), and the package records off the nodes it selects.
func readStatus(ctx context.Context, c client.Client, name string) (*statusView, error) {
	sk, err := existingRollout(ctx, c, name)
	if err != nil {
		return nil, err
	}
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return nil, err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	view := &statusView{Name: sk.Name, Kind: kindOf(sk), Status: string(sk.Status.Status), CompleteNodes: sk.Status.CompleteNodes,
		NodesInProgress: sk.Status.NodesInProgress, Ready: readyOf(sk), Message: conditions.GetMessage(sk, meta.ReadyCondition),
		Blocking: []conditionView{}, Packages: progressOf(sk, nodes.Items), Compartments: sk.Status.Compartments,
		NodesNeedingAttention: sk.Status.NodesNeedingAttention}
	// Empty lists rather than null: tools read the same shape every time.
	if view.Compartments == nil {
		view.Compartments = []skyhookv1.CompartmentStatus{}
	}
	if view.NodesNeedingAttention == nil {
		view.NodesNeedingAttention = []skyhookv1.NodeAttention{}
	}
	for _, t := range []string{skyhookv1.NodesBlockedCondition, skyhookv1.DrainBlockedCondition, skyhookv1.RolloutHaltedCondition, skyhookv1.InterruptWindowClosedCondition, skyhookv1.FleetBudgetHeldCondition, skyhookv1.WaitingForWorkloadsCondition} {
		if conditions.IsTrue(sk, t) {
			view.Blocking = append(view.Blocking, conditionView{Type: t, Message: conditions.GetMessage(sk, t)})
		}
	}
	return view, nil
}

func printStatus(w io.Writer, view *statusView, output string) error {
	if done, err := printStructured(w, output, view); done {
		return err
	}
	fmt.Fprintf(w, "%s %s: %s, %s nodes complete, %d in progress\n", view.Kind, view.Name, orDash(view.Status), orDash(view.CompleteNodes), view.NodesInProgress)
	fmt.Fprintf(w, "Ready: %s (%s)\n", view.Ready, view.Message)
	for _, b := range view.Blocking {
		fmt.Fprintf(w, "%s: %s\n", b.Type, b.Message)
	}
	lines := []string{"\nPACKAGE\tVERSION\tPROGRESS\tCOMPLETE\tIN PROGRESS\tERRORING"}
	for _, p := range view.Packages {
		lines = append(lines, fmt.Sprintf("%s\t%s\t%s\t%d/%d\t%s\t%d", p.Name, p.Version, bar(p.Complete, p.Nodes), p.Complete, p.Nodes, stages(p.InProgress), p.Erroring))
	}
	if len(view.Compartments) > 0 {
		lines = append(lines, "\nCOMPARTMENT\tBATCH\tPROGRESS\tCOMPLETE\tIN PROGRESS\tFAILED BATCHES")
		for _, cp := range view.Compartments {
			halted := ""
			if cp.Halted {
				halted = " (halted)"
			}
			lines = append(lines, fmt.Sprintf("%s\t%d (size %d)\t%s\t%d/%d\t%d\t%d%s", cp.Name, cp.Batch, cp.BatchSize, bar(int(cp.Complete), int(cp.Nodes)), cp.Complete, cp.Nodes, cp.InProgress, cp.ConsecutiveFailures, halted))
		}
	}
	if err := printTable(w, lines...); err != nil {
		return err
	}
	printAttention(w, view.NodesNeedingAttention)
	return nil
}

// progressOf reads the declared packages' records off the nodes (under
// the rollout's kind's keys, or its twin's the operator has yet to move).
func progressOf(sk *skyhookv1.Skyhook, nodes []corev1.Node) []packageProgress {
	out := []packageProgress{}
	leaders := map[string]skyhookv1.RolloutKind{sk.Name: skyhookv1.KindOf(sk)}
	for name, pkg := range sk.Spec.Packages {
		p := packageProgress{Name: name, Version: pkg.Version, Nodes: len(nodes), InProgress: map[string]int{}}
		for i := range nodes {
			kind, ok := recordKindOn(&nodes[i], sk.Name, leaders)
			if !ok {
				continue
			}
			state, err := nodestate.Read(&nodes[i], kind.Named(sk.Name))
			if err != nil {
				continue
			}
			e, ok := state[skyhookv1.NodeStateKey(name, pkg.Version)]
			switch {
			case !ok:
			case e.State == skyhookv1.StateErroring:
				p.Erroring++
			case e.State == skyhookv1.StateInProgress:
				p.InProgress[string(e.Stage)]++
			case e.State == skyhookv1.StateComplete && lastStage(pkg, e.Stage):
				p.Complete++
			default:
				p.InProgress[string(e.Stage)]++ // between stages
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// lastStage reports whether stage is the package's last one.
func lastStage(pkg skyhookv1.Package, stage skyhookv1.Stage) bool {
	if pkg.Interrupt != nil {
		return stage == skyhookv1.StagePostInterrupt
	}
	return stage == skyhookv1.StageConfig || stage == skyhookv1.StagePostInterrupt
}

func stages(running map[string]int) string {
	if len(running) == 0 {
		return "0"
	}
	keys := make([]string, 0, len(running))
	n := 0
	for k, v := range running {
		keys = append(keys, k)
		n += v
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, running[k])
	}
	return fmt.Sprintf("%d (%s)", n, strings.Join(parts, ", "))
}

// bar is a 20-character progress bar.
func bar(done, total int) string {
	const width = 20
	filled := 0
	if total > 0 {
		filled = done * width / total
	}
	return "[" + strings.Repeat("#", filled) + strings.Repeat("-", width-filled) + "]"
}

func printAttention(w io.Writer, nodes []skyhookv1.NodeAttention) {
	if len(nodes) == 0 {
		return
	}
	fmt.Fprintln(w, "\nNodes needing attention:")
	for _, n := range nodes {
		fmt.Fprintf(w, "  %s  %s  %s\n", n.Name, n.Status, n.Message)
	}
}
