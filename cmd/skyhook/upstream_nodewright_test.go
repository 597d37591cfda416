package main

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// The command lines NodeWright v0.20's users run (`kubectl nodewright ...
// --nodewright NAME`), against a NodeWright and the operator: what the
// operator then does is what they are for.
func upstreamNodeWright(t *testing.T) {
	const name = "cli-nodewright-test"
	script(t, "reset", name, "--confirm")
	applyNodeWright(t, name, `
nodeSelectors: {matchLabels: {skyhook.nvidia.com/test-node: skyhooke2e}}
packages:
  hello-world:
    version: "3.2.3"
    image: ghcr.io/nvidia/skyhook/agentless
    env: [{name: SKYHOOK_SIM_DURATION, value: 1s}]
`)
	t.Cleanup(func() { script(t, "reset", name, "--confirm") })
	testenv.Eventually(t, name+" complete", 2*time.Minute, func() bool {
		return getNodeWright(t, name).Status.Status == skyhookv1.StatusComplete
	})
	var list struct {
		SkyhookName, Kind string
		Nodes             []struct{ NodeName, Status string }
	}
	parseJSON(t, script(t, "node", "list", "--nodewright", name, "-o", "json"), &list)
	if list.Kind != "NodeWright" || len(list.Nodes) != 2 || list.Nodes[0].Status != "complete" {
		t.Errorf("node list --nodewright -o json once complete: %+v", list)
	}
	node := firstTestNode(t, testNodeLabel+"=skyhooke2e")
	script(t, "package", "logs", "hello-world", "--nodewright", name, "--node", node)
	if out := script(t, "reconcile", "nodewright", name); !strings.HasSuffix(out, "nodewright "+name+" reconciled\n") {
		t.Errorf("reconcile nodewright:\n%s", out)
	}

	created := nodeWrightPodsCreated(t, name)
	script(t, "node", "reset", node, "--nodewright", name, "--confirm")
	testenv.Eventually(t, "the package runs again on "+node+" after node reset --nodewright", time.Minute, func() bool {
		return created()[node] > 0
	})
	if created()[upstreamNodes[1]] != 0 {
		t.Errorf("node reset %s ran the package again on %s too", node, upstreamNodes[1])
	}
	testenv.Eventually(t, name+" complete again", 2*time.Minute, func() bool {
		return getNodeWright(t, name).Status.Status == skyhookv1.StatusComplete
	})

	// The surgical recovery NodeWright's guide shows: pause, update-state,
	// resume.
	script(t, "pause", name, "--confirm")
	before := created()[node]
	script(t, "update-state", name, "hello-world", "3.2.3", "apply", "in_progress", "--node", node, "--confirm")
	if got := getNode(t, node).Annotations[nwKey(name).NodeStateAnnotation()]; !strings.Contains(got, `"stage":"apply","state":"in_progress"`) {
		t.Fatalf("update-state: record %s", got)
	}
	script(t, "resume", name, "--confirm")
	testenv.Eventually(t, "the operator runs the stage update-state put in progress on "+node, time.Minute, func() bool {
		return created()[node] > before
	})
}

// applyNodeWright creates the NodeWright with the spec and deletes it
// (waiting for the operator to let it go) when the test ends.
func applyNodeWright(t *testing.T, name, spec string) {
	t.Helper()
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: name}}
	mustYAML(t, spec, &nw.Spec)
	if err := testenv.Client(t, env).Create(context.Background(), nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, nw) })
}

// nodeWrightPodsCreated counts the stage pods of the NodeWright created
// from now on, per node.
func nodeWrightPodsCreated(t *testing.T, name string) func() map[string]int {
	t.Helper()
	w, err := env.Clientset.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{LabelSelector: skyhookv1.NodeWrights.OwnerLabel() + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Tally(t, w, func(ev watch.Event) []string {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added {
			return nil
		}
		return []string{pod.Spec.NodeName}
	})
}
