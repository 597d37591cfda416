package reconcile_test

import (
	"context"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// One package on five nodes: apply then config on every node, the Skyhook
// Ready with the reference summary, each node carrying exactly the record
// the reference system writes, and no stage pod left behind.
func TestOnePackageReachesReadyOnFiveNodes(t *testing.T) {
	createNodes(t, simnode.Numbered("ready", 5, map[string]string{"pool": "ready"})...)
	c := k8sClient(t)
	ctx := context.Background()
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "ready"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "ready"}},
			Packages: skyhookv1.Packages{"tuning": {
				PackageRef: skyhookv1.PackageRef{Version: "1.1.0"},
				Image:      "ghcr.io/nvidia/skyhook-packages/shellscript",
				ConfigMap:  map[string]string{"apply.sh": "#!/bin/bash\necho hello\n"},
			}},
		},
	}
	created := stagePodsCreated(t, "ready")
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })

	got := waitSkyhook(t, "ready", 2*time.Minute, isReady)
	// Stage pods run on the host's network and pull with the operator's
	// image pull secret, as upstream's do.
	pods := created()
	if stages := stagesRun(pods); len(stages) != 10 || len(pods) != 5 {
		t.Errorf("%d stage pods created running %v, want a run of apply and config on each of 5 nodes", len(pods), stages)
	}
	for _, pod := range pods {
		if !pod.Spec.HostNetwork || !pod.Spec.HostPID || len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.ImagePullSecrets[0].Name != pullSecret {
			t.Errorf("stage pod %s: hostNetwork %v, hostPID %v, imagePullSecrets %v", pod.Name, pod.Spec.HostNetwork, pod.Spec.HostPID, pod.Spec.ImagePullSecrets)
		}
	}
	if got.Status.CompleteNodes != "5/5" || got.Status.Status != skyhookv1.StatusComplete || got.Status.PackageList != "tuning:1.1.0" || got.Status.NodesInProgress != 0 {
		t.Errorf("status %+v", got.Status)
	}

	var nodes corev1.NodeList
	if err := c.List(ctx, &nodes, client.MatchingLabels{"pool": "ready"}); err != nil {
		t.Fatal(err)
	}
	// Byte for byte what upstream writes (see upstream-written/after-install.yaml).
	wantJSON := `{"tuning|1.1.0":{"name":"tuning","version":"1.1.0","image":"ghcr.io/nvidia/skyhook-packages/shellscript","stage":"config","state":"complete"}}`
	for _, n := range nodes.Items {
		if got := n.Annotations["skyhook.nvidia.com/nodeState_ready"]; got != wantJSON {
			t.Errorf("node %s nodeState_ready = %s, want %s", n.Name, got, wantJSON)
		}
		if n.Labels["skyhook.nvidia.com/status_ready"] != "complete" || n.Annotations["skyhook.nvidia.com/status_ready"] != "complete" {
			t.Errorf("node %s status label %q annotation %q", n.Name, n.Labels["skyhook.nvidia.com/status_ready"], n.Annotations["skyhook.nvidia.com/status_ready"])
		}
	}
	// The rollout's metrics count the nodes and the package records.
	eventually(t, "the metrics of the finished rollout", func() bool {
		return metricValue(t, "skyhook_nodes", map[string]string{"skyhook": "ready", "status": "complete"}) == 5 &&
			metricValue(t, "skyhook_packages", map[string]string{"skyhook": "ready", "package": "tuning", "version": "1.1.0", "stage": "config", "state": "complete"}) == 5
	})
	// A Skyhook's series have the labels they had before NodeWrights were
	// counted: an empty rollout_kind, which Prometheus stores as none.
	for _, s := range testenv.Series(t, "skyhook_nodes", map[string]string{"skyhook": "ready"}) {
		if !hasLabel(s, "rollout_kind", "") {
			t.Errorf("skyhook_nodes of a Skyhook labelled %v, want rollout_kind empty", s.GetLabel())
		}
	}
	// NodeWright's gauges, under both of NodeWright v0.20's names.
	for name, label := range map[string]string{"skyhook_node_target_count": "skyhook_name", "nodewright_node_target_count": "nodewright_name"} {
		if v := metricValue(t, name, map[string]string{label: "ready"}); v != 5 {
			t.Errorf("%s = %v, want 5", name, v)
		}
	}

	// Every stage pod's end counted once, with how long it ran.
	for _, stage := range []string{"apply", "config"} {
		labels := map[string]string{"skyhook": "ready", "package": "tuning", "stage": stage, "result": "succeeded"}
		if n := testenv.MetricSum(t, "skyhook_stage_duration_seconds", labels); n != 5 {
			t.Errorf("skyhook_stage_duration_seconds counts %v %s stages, want 5", n, stage)
		}
	}
	if n := testenv.MetricSum(t, "skyhook_stage_failures_total", map[string]string{"skyhook": "ready"}); n != -1 {
		t.Errorf("skyhook_stage_failures_total = %v, want no series", n)
	}

	eventually(t, "the stage pods to be cleaned up", func() bool {
		var pods corev1.PodList
		_ = c.List(ctx, &pods, client.InNamespace(operatorNamespace), client.MatchingLabels{stagepod.SkyhookLabel: "ready"})
		return len(pods.Items) == 0
	})

	// Deleting the Skyhook removes its status from the nodes; the package
	// has no uninstall support, so, as NodeWright does, its record stays:
	// nothing removed its files.
	if err := c.Delete(ctx, sk); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the node status to be removed, the package records kept", func() bool {
		var nodes corev1.NodeList
		_ = c.List(ctx, &nodes, client.MatchingLabels{"pool": "ready"})
		for _, n := range nodes.Items {
			if n.Annotations["skyhook.nvidia.com/nodeState_ready"] != wantJSON {
				return false
			}
			_, label := n.Labels["skyhook.nvidia.com/status_ready"]
			_, annotation := n.Annotations["skyhook.nvidia.com/status_ready"]
			if label || annotation {
				return false
			}
		}
		return len(nodes.Items) == 5
	})
	waitNoSeries(t, "ready")
}

// hasLabel reports whether the series has the label with the value; an
// empty value also matches a label it does not have, as in Prometheus.
func hasLabel(m *dto.Metric, name, value string) bool {
	for _, l := range m.GetLabel() {
		if l.GetName() == name {
			return l.GetValue() == value
		}
	}
	return value == ""
}

// metricValue reads a gauge of the operator running in this process,
// -1 when the series does not exist.
func metricValue(t *testing.T, name string, labels map[string]string) float64 {
	t.Helper()
	series := testenv.Series(t, name, labels)
	if len(series) == 0 {
		return -1
	}
	return series[0].GetGauge().GetValue()
}
