package sandbox

import (
	"context"
	_ "embed"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/api/nodestate"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

//go:embed demo.yaml
var demoManifest []byte

// runDemo applies the demo Skyhook and shows its rollout until it is Ready.
func runDemo(ctx context.Context, c client.Client, out io.Writer) error {
	sk := &skyhookv1.Skyhook{}
	if err := yaml.UnmarshalStrict(demoManifest, sk); err != nil {
		return err
	}
	if err := c.Create(ctx, sk); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("applying the demo Skyhook: %w", err)
	}
	fmt.Fprintf(out, "\nRolling out the demo Skyhook %q (%s, %d%% of the nodes at a time):\n", sk.Name, packageLine(sk), *sk.Spec.InterruptionBudget.Percent)
	return watchRollout(ctx, c, out, sk)
}

// watchRollout prints a progress line whenever the rollout of the Skyhook
// moves, until it is Ready.
func watchRollout(ctx context.Context, c client.Client, out io.Writer, sk *skyhookv1.Skyhook) error {
	last := ""
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, 5*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
			return false, nil
		}
		line, err := progressLine(ctx, c, sk)
		if err != nil {
			return false, nil
		}
		if line != last {
			fmt.Fprintf(out, "  %s  %s\n", time.Now().Format("15:04:05"), line)
			last = line
		}
		return conditions.IsTrue(sk, meta.ReadyCondition) && sk.Status.ObservedGeneration == sk.Generation, nil
	})
	if err != nil {
		return fmt.Errorf("the Skyhook %s did not become Ready: %w", sk.Name, err)
	}
	return nil
}

// progressLine reads the nodes: how many are done, in progress and waiting,
// and where each package stands.
func progressLine(ctx context.Context, c client.Client, sk *skyhookv1.Skyhook) (string, error) {
	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels(sk.Spec.NodeSelector.MatchLabels)); err != nil {
		return "", err
	}
	counts := map[skyhookv1.Status]int{}
	stages := map[string]int{}
	for i := range nodes.Items {
		counts[skyhookv1.Status(nodes.Items[i].Labels[skyhookv1.StatusKey(sk.Name)])]++
		state, err := nodestate.Read(&nodes.Items[i], skyhookv1.RefOf(sk))
		if err != nil {
			continue
		}
		for _, e := range state {
			if e.State != skyhookv1.StateComplete {
				stages[fmt.Sprintf("%s %s %s", e.Name, e.Stage, e.State)]++
			}
		}
	}
	waiting := len(nodes.Items) - counts[skyhookv1.StatusComplete] - counts[skyhookv1.StatusInProgress] - counts[skyhookv1.StatusErroring]
	line := fmt.Sprintf("%d/%d done, %d in progress, %d waiting", counts[skyhookv1.StatusComplete], len(nodes.Items),
		counts[skyhookv1.StatusInProgress]+counts[skyhookv1.StatusErroring], waiting)
	keys := make([]string, 0, len(stages))
	for k := range stages {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s: %d", k, stages[k]))
	}
	if len(parts) > 0 {
		line += " (" + strings.Join(parts, ", ") + ")"
	}
	if sk.Status.Status != "" {
		line += " — " + string(sk.Status.Status)
	}
	return line, nil
}

func packageLine(sk *skyhookv1.Skyhook) string {
	var items []string
	for name, p := range sk.Spec.Packages {
		items = append(items, name+" "+p.Version)
	}
	sort.Strings(items)
	return "package " + strings.Join(items, ", ")
}
