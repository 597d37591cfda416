package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/nodestate"
)

func newStatusCommand() *cobra.Command {
	var watch bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "status <skyhook>",
		Short: "A Skyhook's rollout: per package and compartment, and the nodes that need attention",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			for {
				if err := printStatus(cmd, c, args[0]); err != nil {
					return err
				}
				if !watch {
					return nil
				}
				select {
				case <-cmd.Context().Done():
					return nil
				case <-time.After(interval):
					fmt.Fprintln(cmd.OutOrStdout())
				}
			}
		},
	}
	cmd.Flags().BoolVarP(&watch, "watch", "w", false, "print again every --interval until interrupted")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often -w prints")
	return cmd
}

// packageProgress counts a package's nodes by where they stand.
type packageProgress struct {
	name, version      string
	complete, erroring int
	running            map[string]int // stage → nodes
}

func printStatus(cmd *cobra.Command, c client.Client, name string) error {
	ctx := cmd.Context()
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, sk); err != nil {
		return err
	}
	sel, err := metav1.LabelSelectorAsSelector(&sk.Spec.NodeSelector)
	if err != nil {
		return err
	}
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return err
	}
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "Skyhook %s: %s, %s nodes complete, %d in progress\n", sk.Name, orDash(string(sk.Status.Status)), orDash(sk.Status.CompleteNodes), sk.Status.NodesInProgress)
	fmt.Fprintf(w, "Ready: %s (%s)\n", readyOf(sk), conditions.GetMessage(sk, meta.ReadyCondition))
	for _, t := range []string{skyhookv1.NodesBlockedCondition, skyhookv1.DrainBlockedCondition, skyhookv1.RolloutHaltedCondition, skyhookv1.InterruptWindowClosedCondition} {
		if conditions.IsTrue(sk, t) {
			fmt.Fprintf(w, "%s: %s\n", t, conditions.GetMessage(sk, t))
		}
	}
	total := len(nodes.Items)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nPACKAGE\tVERSION\tPROGRESS\tCOMPLETE\tIN PROGRESS\tERRORING")
	for _, p := range progressOf(sk, nodes.Items) {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d/%d\t%s\t%d\n", p.name, p.version, bar(p.complete, total), p.complete, total, stages(p.running), p.erroring)
	}
	if len(sk.Status.Compartments) > 0 {
		fmt.Fprintf(tw, "\nCOMPARTMENT\tBATCH\tPROGRESS\tCOMPLETE\tIN PROGRESS\tFAILED BATCHES\n")
		for _, cp := range sk.Status.Compartments {
			halted := ""
			if cp.Halted {
				halted = " (halted)"
			}
			fmt.Fprintf(tw, "%s\t%d (size %d)\t%s\t%d/%d\t%d\t%d%s\n", cp.Name, cp.Batch, cp.BatchSize, bar(int(cp.Complete), int(cp.Nodes)), cp.Complete, cp.Nodes, cp.InProgress, cp.ConsecutiveFailures, halted)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	printAttention(w, sk.Status.NodesNeedingAttention)
	return nil
}

// progressOf reads the declared packages' records off the nodes.
func progressOf(sk *skyhookv1.Skyhook, nodes []corev1.Node) []packageProgress {
	var out []packageProgress
	for name, pkg := range sk.Spec.Packages {
		p := packageProgress{name: name, version: pkg.Version, running: map[string]int{}}
		for i := range nodes {
			state, err := nodestate.Read(&nodes[i], sk.Name)
			if err != nil {
				continue
			}
			e, ok := state[skyhookv1.NodeStateKey(name, pkg.Version)]
			switch {
			case !ok:
			case e.State == skyhookv1.StateErroring:
				p.erroring++
			case e.State == skyhookv1.StateInProgress:
				p.running[string(e.Stage)]++
			case e.State == skyhookv1.StateComplete && lastStage(pkg, e.Stage):
				p.complete++
			default:
				p.running[string(e.Stage)]++ // between stages
			}
		}
		out = append(out, p)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
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

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
