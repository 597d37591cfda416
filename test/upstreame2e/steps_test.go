package upstreame2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
	"github.com/skyhook-go/skyhook/test/upstreame2e/chainsaw"
)

// Timeouts. Upstream's scenarios allow 60-240 s per assert on kind, where a
// stage pod takes seconds; here the default is 2 minutes (KWOK runs a stage
// in a fraction of a second). An expectation that fails while its objects
// have not changed for quietPeriod is reported then: nothing is moving
// that could make it hold (see chainsaw.Runner.Quiet).
const (
	assertTimeout = 2 * time.Minute
	quietPeriod   = 20 * time.Second
	execTimeout   = 30 * time.Second // upstream's --exec-timeout
	deleteTimeout = time.Minute
)

// scenario runs one upstream scenario's steps. Its objects (the ones it
// applies or creates, as chainsaw cleans up) are deleted when it ends, and
// the nodes reset to how they were created.
type scenario struct {
	t *testing.T
	// root is the directory under test/reference that keeps its files.
	root string
	// dir is the scenario's directory under upstream's k8s-tests/chainsaw.
	dir string
	// kind is the kind of rollout the scenario's steps apply and look
	// for, from its directory: NodeWrights for nodewright/ (NodeWright
	// v0.20's twin of a skyhook/ scenario), Skyhooks otherwise. The
	// twins share one body, which names the kind's file, resource and
	// keys through it (rolloutFile, resource, key).
	kind    skyhookv1.RolloutKind
	client  client.Client
	runner  *chainsaw.Runner
	metrics chainsaw.MetricsChecker
	// created are the objects to delete at the end, in creation order.
	created []*unstructured.Unstructured
	// restore puts back, after the objects are deleted and before the
	// nodes are reset, what the scenario took out of the cluster.
	restore []func() error
}

func newScenario(t *testing.T, dir string) *scenario {
	t.Helper()
	return newScenarioIn(t, "nodewright", dir)
}

// newScenarioIn is newScenario for a scenario whose files are kept under
// test/reference/<root> (root nodewright-v0.20: NodeWright v0.20's files
// whose upstream paths the 71ca22b8 files under nodewright already take).
func newScenarioIn(t *testing.T, root, dir string) *scenario {
	t.Helper()
	c := testenv.Client(t, env)
	s := &scenario{
		t:       t,
		root:    root,
		dir:     dir,
		kind:    kindOf(root, dir),
		client:  c,
		runner:  &chainsaw.Runner{Client: c, Namespace: namespace, Timeout: assertTimeout, Quiet: quietPeriod},
		metrics: chainsaw.MetricsChecker{URL: metricsURL},
	}
	start := time.Now()
	t.Cleanup(func() {
		s.cleanup()
		t.Logf("scenario %s took %s", dir, time.Since(start).Round(100*time.Millisecond))
	})
	return s
}

// kindOf is the kind of a scenario's rollout by its root and directory
// (see scenario.kind): NodeWrights for nodewright/ and for every scenario
// kept under nodewright-v0.20 (NodeWright v0.20's deployment-policy/
// files). cli/update-state, which applies a NodeWright too, names it
// itself and does not read the kind.
func kindOf(root, dir string) skyhookv1.RolloutKind {
	if strings.HasPrefix(dir, "nodewright/") || root == "nodewright-v0.20" {
		return skyhookv1.NodeWrights
	}
	return skyhookv1.Skyhooks
}

// resource is the kind's name for kubectl as upstream's scripts write it
// (`kubectl annotate skyhook NAME`, `kubectl delete nodewright NAME`).
func (s *scenario) resource() string { return strings.ToLower(s.kind.Kind) }

// rolloutFile is the scenario's manifest of its rollout: skyhook.yaml for
// a skyhook/ scenario, nodewright.yaml for its v0.20 nodewright/ twin.
func (s *scenario) rolloutFile() string { return s.resource() + ".yaml" }

// key is a label or annotation key under the kind's prefix
// (skyhook.nvidia.com/suffix, nodewright.nvidia.com/suffix).
func (s *scenario) key(suffix string) string { return s.kind.Prefix + "/" + suffix }

// inlineCount is how many resources the scenario's chainsaw-test.yaml
// writes (inlineResources).
func (s *scenario) inlineCount() int { return len(inlineResources[s.name("chainsaw-test.yaml")]) }

// step marks the start of one of upstream's steps.
func (s *scenario) step(name string) {
	s.t.Helper()
	s.t.Logf("step %q", name)
}

// path is a file of the scenario in the repository's copy of upstream.
func (s *scenario) path(file string) string {
	s.t.Helper()
	ref, err := testenv.ReferenceDir()
	if err != nil {
		s.t.Fatal(err)
	}
	return filepath.Join(ref, s.root, "k8s-tests", "chainsaw", filepath.FromSlash(s.dir), file)
}

// name is the file's name under upstream's k8s-tests/chainsaw (after
// "<root>:" for a root other than nodewright, so that its documents' IDs
// are not those of the file the nodewright root keeps at that path).
func (s *scenario) name(file string) string {
	if s.root != "nodewright" {
		return s.root + ":" + s.dir + "/" + file
	}
	return s.dir + "/" + file
}

func (s *scenario) objects(file string) []*unstructured.Unstructured {
	s.t.Helper()
	objs, err := simnode.DecodeManifests(mustRead(s.t, s.path(file)))
	if err != nil {
		s.t.Fatalf("%s: %v", s.name(file), err)
	}
	for _, obj := range objs {
		s.inNamespace(obj)
	}
	return objs
}

// inNamespace gives a namespaced object written without a namespace the
// runner's: chainsaw creates such an object in its test namespace, and
// its asserts look for documents without one there; here both are
// skyhook. An object in upstream's v0.18+ operator namespace (nodewright)
// goes to this operator's (see upstreamNodeWrightNamespace).
func (s *scenario) inNamespace(obj *unstructured.Unstructured) {
	if obj.GetNamespace() == upstreamNodeWrightNamespace {
		obj.SetNamespace(namespace)
		return
	}
	if obj.GetNamespace() != "" {
		return
	}
	if namespaced, err := s.client.IsObjectNamespaced(obj); err == nil && namespaced {
		obj.SetNamespace(namespace)
	}
}

// scheduled waits, for a pod the scenario created without a node, until
// kube-scheduler has bound it (as in upstream's kind cluster), so that the
// scenario's next step sees it placed as chainsaw's would.
func (s *scenario) scheduled(ctx context.Context, obj *unstructured.Unstructured) error {
	if obj.GetAPIVersion() != "v1" || obj.GetKind() != "Pod" {
		return nil
	}
	var pod *corev1.Pod
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		var err error
		pod, err = env.Clientset.CoreV1().Pods(obj.GetNamespace()).Get(ctx, obj.GetName(), metav1.GetOptions{})
		return err == nil && pod.Spec.NodeName != "", nil
	})
	if err != nil {
		why := ""
		if pod != nil {
			for _, c := range pod.Status.Conditions {
				if c.Type == corev1.PodScheduled {
					why = ": " + c.Reason + " " + c.Message
				}
			}
		}
		return fmt.Errorf("pod %s/%s not scheduled within 30s%s", obj.GetNamespace(), obj.GetName(), why)
	}
	return nil
}

// waitPodReady is chainsaw's wait for a pod's Ready condition.
func (s *scenario) waitPodReady(name string, timeout time.Duration) {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		pod, err := env.Clientset.CoreV1().Pods(namespace).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		for _, c := range pod.Status.Conditions {
			if c.Type == corev1.PodReady {
				return c.Status == corev1.ConditionTrue, nil
			}
		}
		return false, nil
	})
	if err != nil {
		s.t.Fatalf("wait for pod %s to be Ready: %v", name, err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// apply is chainsaw's apply: create, or merge-patch what exists (a pod
// created is scheduled, as create's).
func (s *scenario) apply(file string) {
	s.t.Helper()
	for _, obj := range s.objects(file) {
		err := s.retry(func(ctx context.Context) error {
			var current unstructured.Unstructured
			current.SetGroupVersionKind(obj.GroupVersionKind())
			err := s.client.Get(ctx, client.ObjectKeyFromObject(obj), &current)
			if apierrors.IsNotFound(err) {
				if err := s.client.Create(ctx, obj.DeepCopy()); err != nil {
					return err
				}
				s.created = append(s.created, obj)
				return s.scheduled(ctx, obj)
			}
			if err != nil {
				return err
			}
			return s.mergePatch(ctx, obj, &current)
		})
		if err != nil {
			s.t.Fatalf("apply %s: %v", s.name(file), err)
		}
	}
}

// create is chainsaw's create.
func (s *scenario) create(file string) {
	s.t.Helper()
	for _, obj := range s.objects(file) {
		if err := s.retry(func(ctx context.Context) error { return s.client.Create(ctx, obj.DeepCopy()) }); err != nil {
			s.t.Fatalf("create %s: %v", s.name(file), err)
		}
		s.created = append(s.created, obj)
		if err := s.scheduled(context.Background(), obj); err != nil {
			s.t.Fatalf("create %s: %v", s.name(file), err)
		}
	}
}

// patch is chainsaw's patch: the file as a JSON merge patch of the object
// (its resourceVersion set to the object's).
func (s *scenario) patch(file string) {
	s.t.Helper()
	for _, obj := range s.objects(file) {
		err := s.retry(func(ctx context.Context) error {
			var current unstructured.Unstructured
			current.SetGroupVersionKind(obj.GroupVersionKind())
			if err := s.client.Get(ctx, client.ObjectKeyFromObject(obj), &current); err != nil {
				return err
			}
			return s.mergePatch(ctx, obj, &current)
		})
		if err != nil {
			s.t.Fatalf("patch %s: %v", s.name(file), err)
		}
	}
}

// update is chainsaw's update: each of the file's objects replaces the
// live one (its resourceVersion set to the live one's), so what the file
// leaves out goes; retried until accepted.
func (s *scenario) update(file string) {
	s.t.Helper()
	for _, obj := range s.objects(file) {
		err := s.retry(func(ctx context.Context) error {
			var current unstructured.Unstructured
			current.SetGroupVersionKind(obj.GroupVersionKind())
			if err := s.client.Get(ctx, client.ObjectKeyFromObject(obj), &current); err != nil {
				return err
			}
			replacement := obj.DeepCopy()
			replacement.SetResourceVersion(current.GetResourceVersion())
			return s.client.Update(ctx, replacement)
		})
		if err != nil {
			s.t.Fatalf("update %s: %v", s.name(file), err)
		}
	}
}

func (s *scenario) mergePatch(ctx context.Context, obj, current *unstructured.Unstructured) error {
	patch := obj.DeepCopy()
	patch.SetResourceVersion(current.GetResourceVersion())
	data, err := json.Marshal(patch.Object)
	if err != nil {
		return err
	}
	return s.client.Patch(ctx, current, client.RawPatch(types.MergePatchType, data))
}

// retry repeats an operation until it succeeds or the assert timeout
// passes, as chainsaw does; the last error is returned.
func (s *scenario) retry(op func(context.Context) error) error {
	var last error
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, assertTimeout, true, func(ctx context.Context) (bool, error) {
		last = op(ctx)
		return last == nil, nil
	})
	if err != nil && last != nil {
		return last
	}
	return err
}

// createInline is chainsaw's create of the index-th resource written in
// the scenario's chainsaw-test.yaml (inlineResources).
func (s *scenario) createInline(index int) {
	s.t.Helper()
	file := s.name("chainsaw-test.yaml")
	objs, err := simnode.DecodeManifests([]byte(inlineResources[file][index]))
	if err != nil || len(objs) != 1 {
		s.t.Fatalf("inline resource %d of %s: %d objects, %v", index, file, len(objs), err)
	}
	obj := objs[0]
	if err := s.retry(func(ctx context.Context) error { return s.client.Create(ctx, obj.DeepCopy()) }); err != nil {
		s.t.Fatalf("create inline resource %d of %s: %v", index, file, err)
	}
	s.created = append(s.created, obj)
}

// delete is chainsaw's delete: delete the file's objects and wait until
// they are gone.
func (s *scenario) delete(file string) {
	s.t.Helper()
	for _, obj := range s.objects(file) {
		if err := s.deleteAndWait(obj); err != nil {
			s.t.Errorf("delete %s: %v", s.name(file), err)
		}
	}
}

// deleteRef is chainsaw's delete of a ref: a Skyhook API object by kind
// and name (a NodeWright in its own group), waited for.
func (s *scenario) deleteRef(kind, name string) {
	s.t.Helper()
	obj := &unstructured.Unstructured{}
	gvk := skyhookv1.GroupVersion.WithKind(kind)
	if kind == skyhookv1.NodeWrights.Kind {
		gvk = skyhookv1.NodeWrights.GroupVersionKind
	}
	obj.SetGroupVersionKind(gvk)
	obj.SetName(name)
	if err := s.deleteAndWait(obj); err != nil {
		s.t.Errorf("delete %s %s: %v", kind, name, err)
	}
}

func (s *scenario) deleteAndWait(obj *unstructured.Unstructured) error {
	ctx := context.Background()
	if err := s.client.Delete(ctx, obj.DeepCopy()); err != nil {
		return client.IgnoreNotFound(err)
	}
	return wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, deleteTimeout, true, func(ctx context.Context) (bool, error) {
		var current unstructured.Unstructured
		current.SetGroupVersionKind(obj.GroupVersionKind())
		err := s.client.Get(ctx, client.ObjectKeyFromObject(obj), &current)
		return apierrors.IsNotFound(err), nil
	})
}

// waitGone is upstream's script that polls `kubectl get skyhook NAME`
// (`kubectl get nodewright NAME` in a nodewright/ scenario) until it
// fails: the scenario's rollout is gone (its finalizer done) within the
// timeout.
func (s *scenario) waitGone(name string, timeout time.Duration) bool {
	s.t.Helper()
	return s.waitGoneOf(s.kind, name, timeout)
}

// waitGoneOf is waitGone for a rollout of the kind (`kubectl get
// nodewright NAME` for a NodeWright).
func (s *scenario) waitGoneOf(kind skyhookv1.RolloutKind, name string, timeout time.Duration) bool {
	s.t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		var current unstructured.Unstructured
		current.SetGroupVersionKind(kind.GroupVersionKind)
		err := s.client.Get(ctx, client.ObjectKey{Name: name}, &current)
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		s.t.Errorf("upstream expectation failed: %s %s still exists after %s", kind.Kind, name, timeout)
		return false
	}
	s.t.Logf("holds: %s %s is gone", kind.Kind, name)
	return true
}

// eventsExist is upstream's script that polls `kubectl get events -A
// --field-selector=SELECTOR` until it lists one.
func (s *scenario) eventsExist(selector string, timeout time.Duration) bool {
	s.t.Helper()
	var found int
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Clientset.CoreV1().Events("").List(ctx, metav1.ListOptions{FieldSelector: selector})
		if err != nil {
			return false, nil
		}
		found = len(list.Items)
		return found > 0, nil
	})
	if err != nil {
		out, _ := s.kubectl("get", "events", "-A", "-o", "wide")
		s.t.Errorf("upstream expectation failed: no event matches %s within %s; events now:\n%s", selector, timeout, out)
		return false
	}
	s.t.Logf("holds: %d events match %s", found, selector)
	return true
}

// assert evaluates the file's documents (those not in the skip list),
// together: the step waits for the slowest. A failure is reported and the
// scenario goes on, so that one difference does not hide the next.
func (s *scenario) assert(file string) bool {
	s.t.Helper()
	docs, err := chainsaw.ReadFile(s.path(file), s.name(file))
	if err != nil {
		s.t.Fatal(err)
	}
	return s.assertDocs(docs, false)
}

// assertInline evaluates the index-th resource written in upstream's
// chainsaw-test.yaml of the scenario (inlineResources).
func (s *scenario) assertInline(index int) bool {
	s.t.Helper()
	return s.assertDocs([]chainsaw.Document{inline(s.t, s.name("chainsaw-test.yaml"), index)}, false)
}

// errorFile is chainsaw's error operation: no object may match.
func (s *scenario) errorFile(file string) bool {
	s.t.Helper()
	docs, err := chainsaw.ReadFile(s.path(file), s.name(file))
	if err != nil {
		s.t.Fatal(err)
	}
	return s.assertDocs(docs, true)
}

func (s *scenario) assertDocs(docs []chainsaw.Document, negate bool) bool {
	s.t.Helper()
	var wg sync.WaitGroup
	errs := make([]error, len(docs))
	for i, doc := range docs {
		if reason, skip := skipped[doc.ID()]; skip {
			s.t.Logf("skipped %s: %s", doc.ID(), reason)
			continue
		}
		doc = exempt(s.t, doc)
		doc = inOperatorNamespace(s.t, doc)
		wg.Go(func() {
			if negate {
				errs[i] = s.runner.Error(context.Background(), doc)
			} else {
				errs[i] = s.runner.Assert(context.Background(), doc)
			}
		})
	}
	wg.Wait()
	ok := true
	for i, err := range errs {
		if err != nil {
			ok = false
			s.t.Errorf("upstream expectation failed: %v", err)
		} else if _, skip := skipped[docs[i].ID()]; !skip {
			s.t.Logf("holds: %s", docs[i].ID())
		}
	}
	return ok
}

// metricsScript runs the metrics_test.py lines of one of upstream's script
// steps, one after another. Upstream runs them with sh -c, whose status is
// the last command's: a line before the last that fails (after its 30 s)
// does not fail upstream's step. Here every line counts, and a failing one
// says so.
func (s *scenario) metricsScript(lines ...string) bool {
	s.t.Helper()
	ok := true
	for i, line := range lines {
		m, err := chainsaw.ParseMetric(strings.Fields(line)...)
		if err != nil {
			s.t.Fatalf("%s: %v", line, err)
		}
		if err := s.metrics.Check(context.Background(), m); err != nil {
			ok = false
			note := ""
			if i < len(lines)-1 {
				note = " (not the last line of its script: upstream's sh -c would carry on)"
			}
			s.t.Errorf("upstream metrics check failed%s: %v\nsamples now:\n%s", note, err, s.metrics.Samples(context.Background(), m.Name))
			continue
		}
		s.t.Logf("metric holds: %s", m)
	}
	return ok
}

// cli runs this project's CLI as upstream's scripts run ../skyhook-cli, and
// returns its output and error.
func (s *scenario) cli(args ...string) (string, error) {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), execTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cliPath, args...)
	cmd.Env = append(os.Environ(), "KUBECONFIG="+env.Kubeconfig)
	out, err := cmd.CombinedOutput()
	s.t.Logf("skyhook %s: %v\n%s", strings.Join(args, " "), errOrOK(err), out)
	return string(out), err
}

// cliMust runs a CLI step that must succeed.
func (s *scenario) cliMust(args ...string) {
	s.t.Helper()
	if _, err := s.cli(args...); err != nil {
		s.t.Errorf("upstream's CLI step `skyhook-cli %s` failed: %v", strings.Join(args, " "), err)
	}
}

func errOrOK(err error) string {
	if err == nil {
		return "ok"
	}
	return err.Error()
}

// kubectl runs the cluster's kubectl as upstream's scripts do.
func (s *scenario) kubectl(args ...string) (string, error) {
	s.t.Helper()
	out, err := env.Kubectl(args...)
	s.t.Logf("kubectl %s: %v\n%s", strings.Join(args, " "), errOrOK(err), out)
	return out, err
}

// sleep is a chainsaw sleep step, scaled as KWOK scales the agentless
// image's SLEEP_LEN (a tenth), so that a scenario finds the rollout where
// upstream's finds it after its sleep.
func (s *scenario) sleep(d time.Duration) {
	s.t.Helper()
	s.t.Logf("sleep %s (upstream's %s)", d/10, d)
	time.Sleep(d / 10)
}

// workerNodes are the nodes upstream's label-nodes.sh works on: all but the
// control plane, sorted by name.
func workerNodes(t *testing.T) []string {
	t.Helper()
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range list.Items {
		if !strings.Contains(n.Name, "control-plane") {
			names = append(names, n.Name)
		}
	}
	sort.Strings(names)
	return names
}

// labelNodes is upstream's `label-nodes.sh add FIRST-LAST k=v...`: label the
// workers in that range of workerNodes (overwriting).
func (s *scenario) labelNodes(first, last int, labels ...string) {
	s.t.Helper()
	names := workerNodes(s.t)
	if len(names) < last+1 {
		s.t.Fatalf("label-nodes: need at least %d worker nodes, found %d", last+1, len(names))
	}
	for _, name := range names[first : last+1] {
		s.changeNode(name, func(node *corev1.Node) {
			for _, l := range labels {
				k, v, _ := strings.Cut(l, "=")
				node.Labels[k] = v
			}
		})
	}
}

// cleanAllLabels is upstream's `label-nodes.sh clean-all KEY`: the label
// off every node.
func (s *scenario) cleanAllLabels(key string) {
	s.t.Helper()
	list, err := env.Clientset.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{})
	if err != nil {
		s.t.Fatal(err)
	}
	for _, n := range list.Items {
		if _, ok := n.Labels[key]; ok {
			s.changeNode(n.Name, func(node *corev1.Node) { delete(node.Labels, key) })
		}
	}
}

// taintNodes is upstream's nodes_add_taint.sh (n is "all" or a count of
// the matching nodes in name order): kubectl taint --overwrite, which puts
// the new taint first.
func (s *scenario) taintNodes(n, taint, selector string) {
	s.t.Helper()
	want := parseTaint(s.t, taint)
	s.eachNode(n, selector, func(node *corev1.Node) {
		node.Spec.Taints = withTaint(node.Spec.Taints, want)
	})
}

// withTaint is kubectl taint's order: the new taint first, then the
// others but the one it replaces (same key and effect).
func withTaint(taints []corev1.Taint, taint corev1.Taint) []corev1.Taint {
	return append([]corev1.Taint{taint}, slices.DeleteFunc(slices.Clone(taints), func(t corev1.Taint) bool { return t.MatchTaint(&taint) })...)
}

// untaintNodes is upstream's nodes_remove_taint.sh: kubectl taint KEY:EFFECT-.
func (s *scenario) untaintNodes(n, taint, selector string) {
	s.t.Helper()
	want := parseTaint(s.t, taint)
	s.eachNode(n, selector, func(node *corev1.Node) {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool { return t.MatchTaint(&want) })
	})
}

// labelNode is `kubectl label node NAME k=v --overwrite`.
func (s *scenario) labelNode(name, label string) {
	s.t.Helper()
	k, v, _ := strings.Cut(label, "=")
	s.changeNode(name, func(node *corev1.Node) { node.Labels[k] = v })
}

// taintNode is `kubectl taint node NAME key=value:effect --overwrite`.
func (s *scenario) taintNode(name, taint string) {
	s.t.Helper()
	want := parseTaint(s.t, taint)
	s.changeNode(name, func(node *corev1.Node) {
		node.Spec.Taints = withTaint(node.Spec.Taints, want)
	})
}

// untaintNode is `kubectl taint node NAME key-` (every effect), or
// `key:effect-` (that one).
func (s *scenario) untaintNode(name, key string) {
	s.t.Helper()
	key, effect, _ := strings.Cut(strings.TrimSuffix(key, "-"), ":")
	key, _, _ = strings.Cut(key, "=")
	s.changeNode(name, func(node *corev1.Node) {
		node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
			return t.Key == key && (effect == "" || string(t.Effect) == effect)
		})
	})
}

func parseTaint(t *testing.T, spec string) corev1.Taint {
	t.Helper()
	keyValue, effect, ok := strings.Cut(spec, ":")
	if !ok {
		t.Fatalf("taint %q: want key[=value]:effect", spec)
	}
	key, value, _ := strings.Cut(keyValue, "=")
	return corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
}

func (s *scenario) eachNode(n, selector string, change func(*corev1.Node)) {
	s.t.Helper()
	ctx := context.Background()
	list, err := env.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		s.t.Fatal(err)
	}
	names := make([]string, 0, len(list.Items))
	for _, node := range list.Items {
		names = append(names, node.Name)
	}
	sort.Strings(names)
	if n != "all" {
		var count int
		if _, err := fmt.Sscan(n, &count); err != nil {
			s.t.Fatalf("node count %q: %v", n, err)
		}
		names = names[:min(count, len(names))]
	}
	for _, name := range names {
		s.changeNode(name, change)
	}
}

// changeNode updates a node, retrying on conflicts.
func (s *scenario) changeNode(name string, change func(*corev1.Node)) {
	s.t.Helper()
	ctx := context.Background()
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		node, err := env.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return err
		}
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		change(node)
		_, err = env.Clientset.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("node %s: %v", name, err)
	}
}

// cleanup deletes what the scenario created, as chainsaw does at the end
// of a test, waiting for each to go (the operator's finalizer), then puts
// the nodes back as they were created.
func (s *scenario) cleanup() {
	for i := len(s.created) - 1; i >= 0; i-- {
		obj := s.created[i]
		if err := s.deleteAndWait(obj); err != nil {
			s.t.Errorf("cleanup: %s %s not gone after %s: %v", obj.GetKind(), obj.GetName(), deleteTimeout, err)
			s.dropFinalizers(obj)
		}
	}
	for _, restore := range s.restore {
		if err := restore(); err != nil {
			s.t.Errorf("cleanup: %v", err)
		}
	}
	if err := resetNodes(context.Background()); err != nil {
		s.t.Errorf("cleanup: resetting the nodes: %v", err)
	}
}

// dropFinalizers lets an object that would not go away go, so that the
// next scenario starts clean.
func (s *scenario) dropFinalizers(obj *unstructured.Unstructured) {
	ctx := context.Background()
	patch := []byte(`{"metadata":{"finalizers":null}}`)
	current := obj.DeepCopy()
	if err := s.client.Patch(ctx, current, client.RawPatch(types.MergePatchType, patch)); err != nil && !apierrors.IsNotFound(err) {
		s.t.Errorf("cleanup: dropping the finalizers of %s: %v", obj.GetName(), err)
	}
}

// resetNodes puts back every node's labels, skyhook.nvidia.com and
// nodewright.nvidia.com annotations, taints and schedulability as they were
// created.
func resetNodes(ctx context.Context) error {
	var errs []error
	for name, initial := range initialNodes {
		err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
			node, err := env.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				return err
			}
			node.Labels = initial.Labels
			node.Annotations = resetPrefixed(node.Annotations, initial.Annotations)
			node.Spec.Taints = slices.DeleteFunc(node.Spec.Taints, func(t corev1.Taint) bool {
				return !strings.HasPrefix(t.Key, "node.kubernetes.io/") // the node lifecycle controller's
			})
			node.Spec.Taints = append(node.Spec.Taints, initial.Spec.Taints...)
			node.Spec.Unschedulable = initial.Spec.Unschedulable
			_, err = env.Clientset.CoreV1().Nodes().Update(ctx, node, metav1.UpdateOptions{})
			return err
		})
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func resetPrefixed(current, initial map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range current {
		if !operatorKey(k) {
			out[k] = v
		}
	}
	for k, v := range initial {
		if operatorKey(k) {
			out[k] = v
		}
	}
	return out
}

// operatorKey reports whether a node key is under either kind's prefix
// (skyhook.nvidia.com/ for Skyhooks, nodewright.nvidia.com/ for
// NodeWrights), where the operator keeps its records.
func operatorKey(k string) bool {
	return strings.HasPrefix(k, skyhookv1.Skyhooks.Prefix+"/") || strings.HasPrefix(k, skyhookv1.NodeWrights.Prefix+"/")
}

// stagePods are a rollout's stage pods as first seen, by package and stage,
// recorded until the test ends: upstream's pod asserts are NodeWright's pod
// shape (skipped), and what they look for is checked on this operator's
// stage pods instead.
type stagePods struct {
	mu   sync.Mutex
	pods map[string]*corev1.Pod
}

// recordStagePodsOf records the stage pods of the rollout of the kind.
func recordStagePodsOf(t *testing.T, kind skyhookv1.RolloutKind, name string) *stagePods {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: kind.OwnerLabel() + "=" + name})
	if err != nil {
		t.Fatal(err)
	}
	p := &stagePods{pods: map[string]*corev1.Pod{}}
	go func() {
		for ev := range w.ResultChan() {
			pod, ok := ev.Object.(*corev1.Pod)
			if !ok {
				continue
			}
			p.mu.Lock()
			for _, view := range stagepod.Views(pod) { // a pod of several packages under each
				for _, stage := range stagepod.Stages(view) { // a run's pod under each of its stages
					if key := stagepod.PackageOf(view) + " " + string(stage); p.pods[key] == nil {
						p.pods[key] = view
					}
				}
			}
			p.mu.Unlock()
		}
	}()
	return p
}

// get is the package's stage pod of that stage, nil if none was seen.
func (p *stagePods) get(pkg string, stage skyhookv1.Stage) *corev1.Pod {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.pods[pkg+" "+string(stage)]
}

// wait returns the package's stage pod of that stage once one is seen;
// after the assert timeout it reports the failure and returns nil.
func (p *stagePods) wait(s *scenario, pkg string, stage skyhookv1.Stage) *corev1.Pod {
	s.t.Helper()
	var pod *corev1.Pod
	_ = wait.PollUntilContextTimeout(context.Background(), 100*time.Millisecond, assertTimeout, true, func(context.Context) (bool, error) {
		pod = p.get(pkg, stage)
		return pod != nil, nil
	})
	if pod == nil {
		s.t.Errorf("no %s pod of package %s within %s", stage, pkg, assertTimeout)
	}
	return pod
}

// initContainer is the pod's init container of that name, nil if none.
func initContainer(pod *corev1.Pod, name string) *corev1.Container {
	for i := range pod.Spec.InitContainers {
		if pod.Spec.InitContainers[i].Name == name {
			return &pod.Spec.InitContainers[i]
		}
	}
	return nil
}

// The KWOK stage that runs stage pods' init containers, and the parts of
// its delay expression that play the agentless image: SLEEP_LEN scaled (a
// second becomes 100 ms), and a container without SLEEP_LEN taking none.
const (
	podInitStage    = "skyhook-sim-pod-init-next"
	tenthOfASecond  = "($c.sleep // 0) * 100)"
	secondPerSecond = "($c.sleep // 0) * 1000)"
	noDefaultSleep  = `select(.name == "SLEEP_LEN") | .value | tonumber? // 0] | first)`
	// agentlessDefaultSleep is the least of the agentless image's own
	// default, 5 to 9 s (containers/agentless/entrypoint.sh).
	agentlessDefaultSleep = `select(.name == "SLEEP_LEN") | .value | tonumber? // 0] | first // 5)`
)

// agentlessAtOwnSpeed has KWOK run the stage pods that start from now on
// at the agentless image's own speed (SLEEP_LEN in seconds), for an
// expectation that needs stages as long as upstream's; the function it
// returns goes back to a tenth.
func (s *scenario) agentlessAtOwnSpeed() (restore func()) {
	s.t.Helper()
	return s.playAgentless("at its own speed", tenthOfASecond, secondPerSecond)
}

// agentlessSleepsByDefault has KWOK play the agentless image's default for
// the stage pods that start from now on: a container without SLEEP_LEN
// sleeps 5 s (at a tenth), where the simulation otherwise runs it at once.
// The function it returns goes back.
func (s *scenario) agentlessSleepsByDefault() (restore func()) {
	s.t.Helper()
	return s.playAgentless("sleeping 5 s (at a tenth) without SLEEP_LEN", noDefaultSleep, agentlessDefaultSleep)
}

func (s *scenario) playAgentless(how, from, to string) (restore func()) {
	s.t.Helper()
	s.editPodInitDelay(from, to)
	s.t.Logf("the agentless image runs %s", how)
	done := false
	restore = func() {
		if !done {
			done = true
			s.editPodInitDelay(to, from)
			s.t.Logf("the agentless image no longer runs %s", how)
		}
	}
	s.t.Cleanup(restore)
	return restore
}

// editPodInitDelay replaces a part of the delay expression of the stage
// that runs stage pods' init containers.
func (s *scenario) editPodInitDelay(from, to string) {
	s.t.Helper()
	ctx := context.Background()
	stages := dynamic.NewForConfigOrDie(env.Config).Resource(schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"})
	err := retry.RetryOnConflict(retry.DefaultRetry, func() error {
		stage, err := stages.Get(ctx, podInitStage, metav1.GetOptions{})
		if err != nil {
			return err
		}
		expr, _, _ := unstructured.NestedString(stage.Object, "spec", "delay", "durationFrom", "jq", "expression")
		if !strings.Contains(expr, from) {
			return fmt.Errorf("stage %s: its delay expression lacks %q: %s", podInitStage, from, expr)
		}
		if err := unstructured.SetNestedField(stage.Object, strings.Replace(expr, from, to, 1), "spec", "delay", "durationFrom", "jq", "expression"); err != nil {
			return err
		}
		_, err = stages.Update(ctx, stage, metav1.UpdateOptions{})
		return err
	})
	if err != nil {
		s.t.Fatalf("playing the agentless image: %v", err)
	}
}

// skyhookSuiteWorkers makes the cluster upstream's skyhook/ suite runs on,
// two workers (kind-worker, kind-worker2), for a scenario that selects
// every worker: the deployment-policy suite's kind-worker3 ... 15 leave
// the cluster until the scenario's objects are deleted, then come back as
// they were created.
func (s *scenario) skyhookSuiteWorkers() {
	s.t.Helper()
	ctx := context.Background()
	var extra []simnode.Node
	for _, n := range kindNodes() {
		if n.Name == "kind-control-plane" || n.Name == "kind-worker" || n.Name == "kind-worker2" {
			continue
		}
		extra = append(extra, n)
		if err := env.Clientset.CoreV1().Nodes().Delete(ctx, n.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			s.t.Fatalf("taking %s out: %v", n.Name, err)
		}
	}
	s.restore = append(s.restore, func() error {
		if err := env.CreateNodes(ctx, extra...); err != nil {
			return fmt.Errorf("bringing workers 3-%d back: %w", workers, err)
		}
		return nil
	})
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, deleteTimeout, true, func(ctx context.Context) (bool, error) {
		list, err := env.Clientset.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		return err == nil && len(list.Items) == 3, nil
	})
	if err != nil {
		s.t.Fatalf("taking workers 3-%d out: %v", workers, err)
	}
	s.t.Logf("the cluster has upstream's skyhook/ suite's two workers")
}

// inOperatorNamespace returns the document looked for in this operator's
// namespace when it names upstream's v0.18+ operator namespace (see
// upstreamNodeWrightNamespace), else the document as it is.
func inOperatorNamespace(t *testing.T, doc chainsaw.Document) chainsaw.Document {
	t.Helper()
	meta, _ := doc.Expected["metadata"].(map[string]any)
	if meta["namespace"] != upstreamNodeWrightNamespace {
		return doc
	}
	expected := maps.Clone(doc.Expected)
	meta = maps.Clone(meta)
	meta["namespace"] = namespace
	expected["metadata"] = meta
	doc.Expected = expected
	t.Logf("%s: looked for in namespace %s, where the operator under test runs (upstream's v0.18+ runs in %s)", doc.ID(), namespace, upstreamNodeWrightNamespace)
	return doc
}
