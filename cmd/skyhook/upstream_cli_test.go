package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/operatortest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// NodeWright's end-to-end tests of its kubectl plugin
// (k8s-tests/chainsaw/cli/{lifecycle,node,package,reset,deployment-policy})
// run against this CLI: the same command lines with the same flags and
// nothing on the input (a chainsaw script has no terminal), against the
// real apiserver, KWOK nodes labelled as NodeWright's test nodes, and the
// operator. Each step asserts what the chainsaw step asserts (the script's
// exit status, the objects it then checks) and, where chainsaw's check
// cannot fail, what the command is for.

const (
	testNodeLabel   = skyhookv1.MetadataPrefix + "/test-node"
	dpResetLabel    = skyhookv1.MetadataPrefix + "/dp-reset-test"
	upstreamOpSpace = "skyhook-upstream-cli"
)

// upstreamNodes stand for NodeWright's kind workers.
var upstreamNodes = []string{"upstream-worker", "upstream-worker2"}

func TestUpstreamCLI(t *testing.T) {
	startOperator(t)
	ctx := context.Background()
	var nodes []simnode.Node
	for _, name := range upstreamNodes {
		nodes = append(nodes, simnode.Node{Name: name, Labels: map[string]string{testNodeLabel: "skyhooke2e"}})
	}
	if err := env.CreateNodes(ctx, nodes...); err != nil {
		t.Fatal(err)
	}
	c := testenv.Client(t, env)
	t.Cleanup(func() {
		for _, name := range upstreamNodes {
			_ = c.Delete(context.Background(), &corev1.Node{ObjectMeta: objectMeta(name)})
		}
	})
	t.Run("lifecycle", upstreamLifecycle)
	t.Run("node", upstreamNode)
	t.Run("package", upstreamPackage)
	t.Run("reset", upstreamReset)
	t.Run("deployment-policy", upstreamDeploymentPolicy)
	t.Run("nodewright", upstreamNodeWright)
}

// cli/lifecycle: pause and disable with --confirm; resume and enable
// without it, and without input, end without an error and change nothing
// (NodeWright's plugin prints "Aborted." there too, so its chainsaw
// assertions, which only check that the Skyhook exists, hold).
func upstreamLifecycle(t *testing.T) {
	const name = "cli-lifecycle-test"
	script(t, "reset", name, "--confirm")
	applySkyhook(t, name, `
nodeSelectors: {matchLabels: {skyhook.nvidia.com/test-node: skyhooke2e}}
packages:
  test-package:
    version: "1.0.0"
    image: ghcr.io/nvidia/skyhook-packages/shellscript
    configMap: {apply.sh: "#!/bin/bash\necho lifecycle\n"}
`)
	annotation := func(key string) string { return getSkyhook(t, name).Annotations[key] }

	script(t, "pause", name, "--confirm")
	if annotation(skyhookv1.PauseAnnotation) != "true" {
		t.Fatal("pause --confirm: not paused")
	}
	if out := script(t, "resume", name); !strings.HasSuffix(out, "Aborted.\n") || annotation(skyhookv1.PauseAnnotation) != "true" {
		t.Fatalf("resume without --confirm nor input:\n%s", out)
	}
	script(t, "disable", name, "--confirm")
	if annotation(skyhookv1.DisableAnnotation) != "true" {
		t.Fatal("disable --confirm: not disabled")
	}
	if out := script(t, "enable", name); !strings.HasSuffix(out, "Aborted.\n") || annotation(skyhookv1.DisableAnnotation) != "true" {
		t.Fatalf("enable without --confirm nor input:\n%s", out)
	}
	script(t, "pause", name, "--confirm")
	script(t, "disable", name, "--confirm")
	if annotation(skyhookv1.PauseAnnotation) != "true" || annotation(skyhookv1.DisableAnnotation) != "true" {
		t.Fatal("pause and disable: not both set")
	}
	script(t, "resume", name)
	if annotation(skyhookv1.DisableAnnotation) != "true" {
		t.Fatal("resume took the disable annotation")
	}
	script(t, "enable", name)
}

// cli/node: list and status (table and JSON) run before and after the
// rollout; ignore and unignore do not ask; node reset --confirm makes the
// operator run the package on that node again.
func upstreamNode(t *testing.T) {
	const name = "cli-node-test"
	script(t, "reset", name, "--confirm")
	applySkyhook(t, name, `
nodeSelectors: {matchLabels: {skyhook.nvidia.com/test-node: skyhooke2e}}
packages:
  hello-world:
    version: "3.2.3"
    image: ghcr.io/nvidia/skyhook/agentless
    env: [{name: SLEEP_LEN, value: "10"}]
`)
	t.Cleanup(func() {
		script(t, "reset", name, "--confirm")
		for _, n := range upstreamNodes {
			patchNodeLabels(t, n, map[string]any{skyhookv1.IgnoreNodeLabel: nil})
		}
	})
	script(t, "node", "list", "--skyhook", name)
	parseJSON(t, script(t, "node", "list", "--skyhook", name, "-o", "json"), &struct{ SkyhookName string }{})
	node := firstTestNode(t, testNodeLabel+"=skyhooke2e")
	script(t, "node", "status", node)
	script(t, "node", "status", node, "--skyhook", name)
	parseJSON(t, script(t, "node", "status", node, "-o", "json"), &[]map[string]any{})

	waitComplete(t, name)
	var list struct {
		SkyhookName string
		Nodes       []struct{ NodeName, Status string }
	}
	parseJSON(t, script(t, "node", "list", "--skyhook", name, "-o", "json"), &list)
	if list.SkyhookName != name || len(list.Nodes) != 2 || list.Nodes[0].NodeName != upstreamNodes[0] || list.Nodes[0].Status != "complete" {
		t.Errorf("node list -o json once complete: %+v", list)
	}
	var status []struct{ NodeName, SkyhookName, Status string }
	parseJSON(t, script(t, "node", "status", node, "-o", "json"), &status)
	if len(status) != 1 || status[0].NodeName != node || status[0].SkyhookName != name || status[0].Status != "complete" {
		t.Errorf("node status -o json once complete: %+v", status)
	}

	script(t, "node", "ignore", node)
	if getNode(t, node).Labels[skyhookv1.IgnoreNodeLabel] != "true" {
		t.Fatal("node ignore: the node is not ignored")
	}
	script(t, "node", "unignore", node)
	if _, ok := getNode(t, node).Labels[skyhookv1.IgnoreNodeLabel]; ok {
		t.Fatal("node unignore: the node still has the ignore label")
	}

	created := stagePodsCreated(t, name)
	script(t, "node", "reset", node, "--skyhook", name, "--confirm")
	testenv.Eventually(t, "the package runs again on "+node+" after node reset", time.Minute, func() bool {
		return created()[node] > 0
	})
	if created()[upstreamNodes[1]] != 0 {
		t.Errorf("node reset %s ran the package again on %s too", node, upstreamNodes[1])
	}
}

// cli/package: status (table and JSON) and logs run before the rollout is
// done; once complete, a dry run of rerun changes nothing and a rerun of
// the apply stage puts the node back in progress.
func upstreamPackage(t *testing.T) {
	const name = "cli-package-test"
	script(t, "reset", name, "--confirm")
	applySkyhook(t, name, `
nodeSelectors: {matchLabels: {skyhook.nvidia.com/test-node: skyhooke2e}}
packages:
  hello-world:
    version: "3.2.3"
    image: ghcr.io/nvidia/skyhook/agentless
    env: [{name: SLEEP_LEN, value: "5"}, {name: SKYHOOK_SIM_DURATION, value: 1s}]
`)
	t.Cleanup(func() { script(t, "reset", name, "--confirm") })
	script(t, "package", "status", "hello-world", "--skyhook", name)
	parseJSON(t, script(t, "package", "status", "hello-world", "--skyhook", name, "-o", "json"), &[]map[string]any{})
	node := firstTestNode(t, testNodeLabel+"=skyhooke2e")
	script(t, "package", "logs", "hello-world", "--skyhook", name, "--node", node)

	waitComplete(t, name)
	var records []struct{ Name, NodeName, State string }
	parseJSON(t, script(t, "package", "status", "hello-world", "--skyhook", name, "-o", "json"), &records)
	if len(records) != 2 || records[0].Name != "hello-world" || records[0].NodeName != upstreamNodes[0] || records[0].State != "complete" {
		t.Errorf("package status -o json once complete: %+v", records)
	}
	before := getNode(t, node).Annotations[skyhookv1.NodeStateAnnotation(name)]
	script(t, "package", "rerun", "hello-world", "--skyhook", name, "--node", node, "--dry-run")
	if after := getNode(t, node).Annotations[skyhookv1.NodeStateAnnotation(name)]; after != before {
		t.Fatalf("rerun --dry-run changed the record:\n%s\n%s", before, after)
	}
	statuses := nodeAnnotationValues(t, node, skyhookv1.StatusKey(name))
	script(t, "package", "rerun", "hello-world", "--skyhook", name, "--node", node, "--stage", "apply", "--confirm")
	testenv.Eventually(t, "status_"+name+" in_progress on "+node, time.Minute, func() bool {
		return statuses()[string(skyhookv1.StatusInProgress)] > 0
	})
}

// cli/reset: a complete Skyhook, disabled, then reset --confirm: no node
// keeps its record or a cordon_ mark; the (disabled) operator marks the
// nodes disabled and starts the node order over.
func upstreamReset(t *testing.T) {
	const name = "cli-reset-test"
	script(t, "reset", name, "--confirm")
	applySkyhook(t, name, `
nodeSelectors: {matchLabels: {skyhook.nvidia.com/test-node: skyhooke2e}}
packages:
  test-package:
    version: "1.0.0"
    image: ghcr.io/nvidia/skyhook-packages/shellscript
    configMap: {apply.sh: "#!/bin/bash\necho reset\n"}
`)
	waitComplete(t, name)
	testenv.Eventually(t, name+" counts the nodes that left its node order", time.Minute, func() bool {
		return getSkyhook(t, name).Status.NodeOrderOffset == len(upstreamNodes) // what the reset has to start over
	})
	script(t, "disable", name, "--confirm")
	if getSkyhook(t, name).Annotations[skyhookv1.DisableAnnotation] != "true" {
		t.Fatal("disable --confirm: not disabled")
	}
	out := script(t, "reset", name, "--confirm")
	if !strings.Contains(out, "Nodes to reset (2):") || !strings.Contains(out, "Batch state will also be reset") {
		t.Errorf("reset --confirm:\n%s", out)
	}
	for _, n := range upstreamNodes {
		anns := getNode(t, n).Annotations
		for _, key := range []string{skyhookv1.NodeStateAnnotation(name), skyhookv1.CordonAnnotation(name)} {
			if _, ok := anns[key]; ok {
				t.Errorf("%s keeps %s after reset", n, key)
			}
		}
	}
	// The operator's part: it starts the node order over (the
	// reset-batch-state annotation the CLI set) ...
	t.Run("operator/batch-reset", func(t *testing.T) {
		testenv.Eventually(t, "the operator handled the batch reset of "+name, time.Minute, func() bool {
			sk := getSkyhook(t, name)
			_, asked := sk.Annotations[skyhookv1.ResetBatchStateAnnotation]
			return !asked && sk.Status.NodeOrderOffset == 0 && len(sk.Status.NodePriority) == 0
		})
	})
	// ... and marks the nodes of the disabled Skyhook disabled again.
	t.Run("operator/disabled-status", func(t *testing.T) {
		for _, n := range upstreamNodes {
			testenv.Eventually(t, "status_"+name+"=disabled on "+n, 30*time.Second, func() bool {
				return getNode(t, n).Annotations[skyhookv1.StatusKey(name)] == string(skyhookv1.StatusDisabled)
			})
		}
	})
}

// cli/deployment-policy: a rollout in exponential batches whose batch
// state is kept on completion (the Skyhook's override), then
// deployment-policy reset --confirm: batch 1 again.
func upstreamDeploymentPolicy(t *testing.T) {
	const name, policyName = "cli-dp-reset-test", "cli-dp-reset-policy"
	ctx := context.Background()
	c := testenv.Client(t, env)
	script(t, "reset", name, "--confirm")
	for _, n := range upstreamNodes {
		patchNodeLabels(t, n, map[string]any{dpResetLabel: "true"})
	}
	t.Cleanup(func() {
		for _, n := range upstreamNodes {
			patchNodeLabels(t, n, map[string]any{dpResetLabel: nil})
		}
	})
	policy := &skyhookv1.DeploymentPolicy{}
	mustYAML(t, `
metadata: {name: cli-dp-reset-policy}
spec:
  resetBatchStateOnCompletion: true
  default:
    budget: {count: 1}
    strategy: {exponential: {initialBatch: 1, growthFactor: 2}}
`, policy)
	if err := c.Create(ctx, policy); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, policy) }) // after the Skyhook's (cleanups run last in, first out)
	applySkyhook(t, name, `
deploymentPolicy: `+policyName+`
deploymentPolicyOptions: {resetBatchStateOnCompletion: false}
nodeSelectors: {matchLabels: {skyhook.nvidia.com/dp-reset-test: "true"}}
packages:
  test-package:
    version: "1.1.1"
    image: ghcr.io/nvidia/skyhook-packages/shellscript
    configMap: {apply.sh: "#!/bin/bash\necho dp reset\n"}
`)
	testenv.Eventually(t, name+" complete with its batch state kept", 2*time.Minute, func() bool {
		sk := getSkyhook(t, name)
		d, ok := sk.Status.CompartmentStatuses["__default__"]
		return sk.Status.Status == skyhookv1.StatusComplete && ok && d.ProgressPercent == 100 && d.BatchState != nil && d.BatchState.CurrentBatch > 1
	})
	out := script(t, "deployment-policy", "reset", name, "--confirm")
	if !strings.Contains(out, "Skyhook: "+name+"\nCompartments: 1 total, 1 with batch state\n") ||
		!strings.Contains(out, `Batch state reset requested for Skyhook "`+name+`"`) {
		t.Errorf("deployment-policy reset --confirm:\n%s", out)
	}
	// The operator's part: batch 1 again.
	t.Run("operator/batch-reset", func(t *testing.T) {
		testenv.Eventually(t, "batch 1 again after deployment-policy reset", time.Minute, func() bool {
			d := getSkyhook(t, name).Status.CompartmentStatuses["__default__"]
			return d.BatchState != nil && d.BatchState.CurrentBatch == 1
		})
	})
}

// script runs one line of a chainsaw script: the CLI with nothing on its
// input; an error fails the step, as a non-zero exit fails the script.
func script(t *testing.T, args ...string) string {
	t.Helper()
	out, err := run(t, withCluster(args...)...)
	if err != nil {
		t.Fatalf("skyhook %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func parseJSON(t *testing.T, out string, into any) {
	t.Helper()
	if err := json.Unmarshal([]byte(out), into); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, out)
	}
}

func mustYAML(t *testing.T, text string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(text), into); err != nil {
		t.Fatalf("%v\n%s", err, text)
	}
}

// applySkyhook creates the Skyhook with the spec and deletes it (waiting
// for the operator to let it go) when the test ends.
func applySkyhook(t *testing.T, name, spec string) {
	t.Helper()
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}}
	mustYAML(t, spec, &sk.Spec)
	if err := testenv.Client(t, env).Create(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteAndWait(t, sk) })
}

func deleteAndWait(t *testing.T, obj client.Object) {
	t.Helper()
	c := testenv.Client(t, env)
	if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
		t.Error(err)
		return
	}
	testenv.Eventually(t, obj.GetName()+" deleted", time.Minute, func() bool {
		return apierrors.IsNotFound(c.Get(context.Background(), client.ObjectKeyFromObject(obj), obj))
	})
}

func waitComplete(t *testing.T, name string) {
	t.Helper()
	testenv.Eventually(t, name+" complete", 2*time.Minute, func() bool {
		return getSkyhook(t, name).Status.Status == skyhookv1.StatusComplete
	})
}

// firstTestNode is what `kubectl get nodes -l <selector> -o
// jsonpath='{.items[0].metadata.name}'` prints.
func firstTestNode(t *testing.T, selector string) string {
	t.Helper()
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil || len(list.Items) == 0 {
		t.Fatalf("no node %s: %v", selector, err)
	}
	return list.Items[0].Name
}

func patchNodeLabels(t *testing.T, name string, labels map[string]any) {
	t.Helper()
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"labels": labels}})
	if _, err := env.Clientset.CoreV1().Nodes().Patch(context.Background(), name, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
}

// stagePodsCreated counts the stage pods of the Skyhook created from now
// on, per node.
func stagePodsCreated(t *testing.T, skyhook string) func() map[string]int {
	t.Helper()
	w, err := env.Clientset.CoreV1().Pods("").Watch(context.Background(), metav1.ListOptions{LabelSelector: stagepod.SkyhookLabel + "=" + skyhook})
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

// nodeAnnotationValues records every value the node's annotation takes
// from now on (a watch sees each write, however short-lived).
func nodeAnnotationValues(t *testing.T, node, key string) func() map[string]int {
	t.Helper()
	n := getNode(t, node)
	w, err := env.Clientset.CoreV1().Nodes().Watch(context.Background(), metav1.ListOptions{
		FieldSelector: "metadata.name=" + node, ResourceVersion: n.ResourceVersion})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Tally(t, w, func(ev watch.Event) []string {
		n, ok := ev.Object.(*corev1.Node)
		if !ok {
			return nil
		}
		return []string{n.Annotations[key]}
	})
}

// startOperator runs the operator until the test ends, then removes its
// webhook configurations: the other tests of this package run without an
// operator, and a configuration pointing at a stopped webhook would refuse
// their Skyhooks.
func startOperator(t *testing.T) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	if err := operatortest.Start(ctx, env, operator.Options{Namespace: upstreamOpSpace}); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cancel()
		c := testenv.Client(t, env)
		for _, obj := range []client.Object{
			&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: objectMeta(config.MutatingWebhookName)},
			&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: objectMeta(config.ValidatingWebhookName)},
		} {
			if err := c.Delete(context.Background(), obj); client.IgnoreNotFound(err) != nil {
				t.Error(err)
			}
		}
	})
}
