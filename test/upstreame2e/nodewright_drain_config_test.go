package upstreame2e

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skyhook-go/skyhook/test/upstreame2e/chainsaw"
)

// nodewright/drain-config (new in NodeWright v0.18, its timeout step as
// v0.20 has it): drainConfig.disableEviction deletes a pod that a
// zero-disruption PodDisruptionBudget protects, and the interrupt
// completes; drainConfig.timeout with an unmanaged pod on the node (force
// false) leaves the node and the NodeWright erroring, the drain's start and
// blocker recorded on the node, DrainBlocked true and a Drain event "drain
// timed out".
func TestNodeWrightDrainConfig(t *testing.T) {
	s := newScenario(t, "nodewright/drain-config")

	s.step("disable-eviction-bypasses-pdb")
	_, _ = s.cli("reset", "drain-config-disable-eviction", "--confirm") // upstream: || true
	s.apply("disable-eviction.yaml")
	// kubectl rollout status: the Deployment's pod, bound by
	// kube-scheduler as on upstream's cluster.
	original := s.scheduleSelected("app=drain-config-pdb", 60*time.Second)
	s.waitPodReady(original, 30*time.Second)
	s.waitPDBDisruptionsAllowed("drain-config-pdb", 0, 60*time.Second)
	s.apply("disable-eviction-nodewright.yaml")
	if _, err := s.kubectl("wait", "--for=condition=Ready", "nodewright/drain-config-disable-eviction", "--timeout=180s"); err != nil {
		t.Errorf("upstream expectation failed: kubectl wait for Ready: %v", err)
	}
	if _, err := env.Clientset.CoreV1().Pods(namespace).Get(context.Background(), original, metav1.GetOptions{}); err == nil {
		t.Errorf("upstream expectation failed: expected original PDB-protected pod %s to be deleted directly", original)
	} else {
		t.Logf("holds: the PDB-protected pod %s was deleted", original)
	}
	// finally
	_, _ = s.cli("reset", "drain-config-disable-eviction", "--confirm")
	s.deleteRef("NodeWright", "drain-config-disable-eviction")
	s.delete("disable-eviction.yaml")
	s.uncordonTestNodes()

	s.step("timeout-surfaces-erroring")
	_, _ = s.cli("reset", "drain-config-timeout", "--confirm") // upstream: || true
	s.apply("timeout.yaml")
	s.waitPodReady("drain-config-blocker", 30*time.Second)
	if _, err := s.kubectl("wait", "--for=jsonpath={.status.status}=erroring", "nodewright/drain-config-timeout", "--timeout=180s"); err != nil {
		t.Errorf("upstream expectation failed: kubectl wait for status erroring: %v", err)
	}
	s.assertDocs(drainBlockerInOperatorNamespace(t, s), false)
	s.drainTimedOutEvent("drain-config-timeout", 60*time.Second)
	// finally
	_, _ = s.cli("reset", "drain-config-timeout", "--confirm")
	s.uncordonTestNodes()
}

// drainBlockerInOperatorNamespace is timeout-assert.yaml with its blocker
// filter looking in this operator's namespace: upstream's blocker pod
// lives in its operator's namespace (nodewright), here in this one's
// (inOperatorNamespace), so the namespace the drainBlocked record names is
// this one's.
func drainBlockerInOperatorNamespace(t *testing.T, s *scenario) []chainsaw.Document {
	t.Helper()
	docs, err := chainsaw.ReadFile(s.path("timeout-assert.yaml"), s.name("timeout-assert.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	from, to := "namespace == '"+upstreamNodeWrightNamespace+"'", "namespace == '"+namespace+"'"
	for i, doc := range docs {
		meta, _ := doc.Expected["metadata"].(map[string]any)
		annotations, _ := meta["annotations"].(map[string]any)
		for k, v := range annotations {
			if strings.Contains(k, from) {
				delete(annotations, k)
				annotations[strings.ReplaceAll(k, from, to)] = v
				t.Logf("%s: drainBlocked record looked for in namespace %s, where the blocker pod runs here", docs[i].ID(), namespace)
			}
		}
	}
	return docs
}

// scheduleSelected waits until kube-scheduler has bound a pod of the
// selector that a controller made (a Deployment's), and returns its name.
func (s *scenario) scheduleSelected(selector string, timeout time.Duration) string {
	s.t.Helper()
	var name string
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector})
		if err != nil {
			return false, nil
		}
		for _, pod := range list.Items {
			if pod.DeletionTimestamp == nil && pod.Spec.NodeName != "" {
				name = pod.Name
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("no pod of %s bound within %s: %v", selector, timeout, err)
	}
	return name
}

// waitPDBDisruptionsAllowed is kubectl wait for the PDB's
// status.disruptionsAllowed.
func (s *scenario) waitPDBDisruptionsAllowed(name string, want int32, timeout time.Duration) {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pdb, err := env.Clientset.PolicyV1().PodDisruptionBudgets(namespace).Get(ctx, name, metav1.GetOptions{})
		return err == nil && pdb.Status.ObservedGeneration == pdb.Generation && pdb.Status.DisruptionsAllowed == want, nil
	})
	if err != nil {
		s.t.Fatalf("PDB %s: disruptionsAllowed not %d within %s", name, want, timeout)
	}
}

// uncordonTestNodes is the `kubectl uncordon` of the test nodes in
// upstream's finally.
func (s *scenario) uncordonTestNodes() {
	s.t.Helper()
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: nodeWrightTestNodeLabel + "=" + testNodeValue})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, node := range list.Items {
		s.changeNode(node.Name, func(n *corev1.Node) { n.Spec.Unschedulable = false })
	}
}

// drainTimedOutEvent is upstream's script that polls every event for one
// that reads Drain, names the NodeWright and says "drain timed out".
func (s *scenario) drainTimedOutEvent(name string, timeout time.Duration) {
	s.t.Helper()
	var found string
	err := wait.PollUntilContextTimeout(context.Background(), 500*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Clientset.CoreV1().Events("").List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, nil
		}
		for _, e := range list.Items {
			line := strings.Join([]string{e.Namespace, e.Reason, e.Action, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message}, "\t")
			if strings.Contains(line, "Drain") && strings.Contains(line, name) && strings.Contains(line, "drain timed out") {
				found = line
				return true, nil
			}
		}
		return false, nil
	})
	if err != nil {
		out, _ := s.kubectl("get", "events", "-A", "-o", "wide")
		s.t.Errorf("upstream expectation failed: expected drain timeout event for %s; events now:\n%s", name, out)
		return
	}
	s.t.Logf("holds: drain timeout event %q", found)
}
