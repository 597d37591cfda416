package takeover_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/runtime/conditions"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// v020 is the fixture of a cluster NodeWright v0.20 left mid-rollout
// (testdata/nodewright-v0.20.yaml says what each node holds).
type v020 struct {
	rollouts []*unstructured.Unstructured // the NodeWright and its legacy Skyhook, status included
	nodes    []*unstructured.Unstructured
	jobs     []*unstructured.Unstructured
}

func loadV020(t *testing.T) v020 {
	t.Helper()
	data, err := os.ReadFile("testdata/nodewright-v0.20.yaml")
	if err != nil {
		t.Fatal(err)
	}
	objs, err := simnode.DecodeManifests(data)
	if err != nil {
		t.Fatal(err)
	}
	var f v020
	for _, o := range objs {
		switch o.GetKind() {
		case "Node":
			f.nodes = append(f.nodes, o)
		case "Job":
			f.jobs = append(f.jobs, o)
		default:
			f.rollouts = append(f.rollouts, o)
		}
	}
	return f
}

// installV020 puts the fixture in the cluster with no operator running, and
// runs NodeWright's Jobs until each is where its node's record says: the
// failed and the completed one finished, the other two still running.
func installV020(t *testing.T, f v020) {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client(t, env)
	for _, n := range f.nodes {
		if err := env.CreateNodes(ctx, simnode.Node{Name: n.GetName(), Labels: n.GetLabels()}); err != nil {
			t.Fatal(err)
		}
		name := n.GetName()
		t.Cleanup(func() { _ = env.Clientset.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		unschedulable, _, _ := unstructured.NestedBool(n.Object, "spec", "unschedulable")
		patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": n.GetAnnotations()}, "spec": map[string]any{"unschedulable": unschedulable}})
		if _, err := env.Clientset.CoreV1().Nodes().Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range f.rollouts {
		obj := r.DeepCopy()
		status := obj.Object["status"]
		delete(obj.Object, "status")
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating %s: %v", obj.GetKind(), err)
		}
		obj.Object["status"] = status
		if err := c.Status().Update(ctx, obj); err != nil {
			t.Fatalf("writing the status of %s: %v", obj.GetKind(), err)
		}
	}
	if err := operator.EnsureNamespace(ctx, env.Config, namespace); err != nil {
		t.Fatal(err)
	}
	for _, j := range f.jobs {
		obj := j.DeepCopy()
		obj.SetNamespace(namespace)
		if err := c.Create(ctx, obj); err != nil {
			t.Fatalf("creating Job %s: %v", obj.GetName(), err)
		}
	}
	testenv.Eventually(t, "NodeWright's Jobs on v020-3 to fail and on v020-4 to complete", time.Minute, func() bool {
		return jobEnded(t, "v020-3", batchv1.JobFailed) && jobEnded(t, "v020-4", batchv1.JobComplete)
	})
}

// jobEnded reports whether NodeWright's Job on the node has the condition.
func jobEnded(t *testing.T, node string, cond batchv1.JobConditionType) bool {
	for _, j := range gpuJobs(t) {
		if j.Spec.Template.Spec.NodeName != node {
			continue
		}
		for _, c := range j.Status.Conditions {
			if c.Type == cond && c.Status == corev1.ConditionTrue {
				return true
			}
		}
	}
	return false
}

func gpuJobs(t *testing.T) []batchv1.Job {
	t.Helper()
	var jobs batchv1.JobList
	if err := testenv.Client(t, env).List(context.Background(), &jobs, client.InNamespace(namespace), client.MatchingLabels{"nodewright.nvidia.com/name": "gpu"}); err != nil {
		t.Fatal(err)
	}
	return jobs.Items
}

// nodeWrightPods tallies the stage pods this operator creates for a
// NodeWright from now on, by "node/package/stage" (NodeWright's Jobs' pods
// are the Jobs', not counted).
func nodeWrightPods(t *testing.T) func() map[string]int {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	w, err := env.Clientset.CoreV1().Pods(namespace).Watch(ctx, metav1.ListOptions{LabelSelector: "nodewright.nvidia.com/nodewright"})
	if err != nil {
		t.Fatal(err)
	}
	return testenv.Tally(t, w, func(ev watch.Event) []string {
		pod, ok := ev.Object.(*corev1.Pod)
		if !ok || ev.Type != watch.Added {
			return nil
		}
		var keys []string
		for _, view := range stagepod.Views(pod) { // a pod of several packages under each
			for _, stage := range stagepod.Stages(view) { // a run's pod under each of its stages
				keys = append(keys, pod.Spec.NodeName+"/"+stagepod.PackageOf(view)+"/"+string(stage))
			}
		}
		return keys
	})
}

// Taking over from NodeWright v0.20 mid-rollout: its running Jobs are
// waited for and their outcome recorded, the finished ones read, each
// deleted once read; no completed stage runs again and no stage runs
// beside a Job of NodeWright's; the interrupt NodeWright started is not
// run a second time; the legacy copies of its migration go, the legacy
// Skyhook reports the NodeWright's status, and both delete without
// hanging on a finalizer.
func TestTakeoverFromNodeWrightV020MidRollout(t *testing.T) {
	f := loadV020(t)
	installV020(t, f)
	created := nodeWrightPods(t)
	startOperator(t)

	c := testenv.Client(t, env)
	ctx := context.Background()
	nw := &nodewrightv1.NodeWright{}
	testenv.Eventually(t, "the NodeWright to be complete on its 5 nodes", 3*time.Minute, func() bool {
		return c.Get(ctx, client.ObjectKey{Name: "gpu"}, nw) == nil && conditions.IsReady(nw) && nw.Status.CompleteNodes == "5/5"
	})
	kernel := []string{"kernel/apply", "kernel/config", "kernel/interrupt", "kernel/post-interrupt"}
	want := map[string]int{"v020-5/kernel/post-interrupt": 1}
	for _, node := range []string{"v020-2", "v020-3", "v020-4"} {
		want[node+"/tuning/config"] = 1
		for _, stage := range kernel {
			want[node+"/"+stage] = 1
		}
	}
	want["v020-3/tuning/apply"] = 1 // the failed stage, tried again
	if got := created(); !equalCounts(got, want) {
		t.Errorf("stage pods %v, want %v", got, want)
	}
	testenv.Eventually(t, "NodeWright's Jobs to be deleted once read", time.Minute, func() bool { return len(gpuJobs(t)) == 0 })

	for _, u := range f.nodes {
		n := node(t, u.GetName())
		for key := range n.Annotations {
			if strings.HasPrefix(key, "skyhook.nvidia.com/") && strings.HasSuffix(key, "_gpu") {
				t.Errorf("node %s keeps the legacy copy %s", n.Name, key)
			}
		}
		if n.Spec.Unschedulable || n.Annotations["nodewright.nvidia.com/cordon_gpu"] != "" {
			t.Errorf("node %s left cordoned: %v, cordon_gpu %q", n.Name, n.Spec.Unschedulable, n.Annotations["nodewright.nvidia.com/cordon_gpu"])
		}
	}
	if got, want := node(t, "v020-1").Annotations["nodewright.nvidia.com/nodeState_gpu"], f.nodes[0].GetAnnotations()["nodewright.nvidia.com/nodeState_gpu"]; got != want {
		t.Errorf("the complete node's record was rewritten: %s", got)
	}
	legacy := &skyhookv1.Skyhook{}
	if err := c.Get(ctx, client.ObjectKey{Name: "gpu"}, legacy); err != nil || !conditions.IsReady(legacy) || conditions.GetReason(legacy, "Ready") != "Superseded" {
		t.Errorf("the legacy Skyhook: %v, %+v", err, legacy.Status.Conditions)
	}

	for _, obj := range []client.Object{&skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}, &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}} {
		if err := c.Delete(ctx, obj); err != nil {
			t.Fatal(err)
		}
		testenv.Eventually(t, "the deleted "+obj.GetObjectKind().GroupVersionKind().Kind+" to be gone", time.Minute, func() bool {
			return apierrors.IsNotFound(c.Get(ctx, client.ObjectKeyFromObject(obj), obj))
		})
	}
	if got := created(); !equalCounts(got, want) {
		t.Errorf("stage pods created by the deletes: %v", got)
	}
}
