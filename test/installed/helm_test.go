package installed

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	"helm.sh/helm/v3/pkg/chart"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/chartinstall"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/config/helm"
)

// releaseName is the release, as docs/install.md names it.
const releaseName = chartinstall.ReleaseName

// helmTimeout bounds an action's wait: image pulls, the operator's
// start-up and its certificates.
const helmTimeout = 3 * time.Minute

// helmActions is Helm's SDK configured as `helm --kubeconfig K -n
// skyhook-system` is, its progress in the test's log.
func helmActions(t testing.TB) *action.Configuration {
	t.Helper()
	cfg, err := chartinstall.Actions(env.Kubeconfig, namespace, testLog{t})
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// testLog writes to the test's log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// operatorChart is the chart as it ships.
func operatorChart(t testing.TB) *chart.Chart {
	t.Helper()
	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	return ch
}

// values are what an admin sets for this cluster: the images of the
// build, the registry's pull secret, the pause image the nodes can pull,
// and the operator on the real nodes (a pod on a KWOK node never runs).
func values(b build) map[string]any {
	return map[string]any{
		"controllerManager": map[string]any{
			"selectors": map[string]any{kubeletnode.Label: kubeletnode.LabelValue},
			"manager": map[string]any{
				"image": map[string]any{"repository": reg.Host() + "/skyhook-operator", "tag": b.version},
				"agent": map[string]any{"repository": reg.Host() + "/skyhook-agent", "tag": b.version},
				"env":   map[string]any{"pauseImage": pause},
			},
		},
		"imagePullSecrets": []any{pullSecret},
	}
}

// helmInstall is `helm install skyhook-operator -n skyhook-system --wait`
// with the values.
func helmInstall(t testing.TB, vals map[string]any) {
	t.Helper()
	if err := chartinstall.Install(helmActions(t), namespace, vals, helmTimeout); err != nil {
		t.Fatalf("helm install: %v\n%s", err, describeNamespace())
	}
}

// helmUninstall is `helm uninstall skyhook-operator --wait`: the
// pre-delete cleanup Job runs first.
func helmUninstall(t testing.TB) {
	t.Helper()
	uninstall := action.NewUninstall(helmActions(t))
	uninstall.Wait, uninstall.Timeout = true, helmTimeout
	if _, err := uninstall.Run(releaseName); err != nil {
		t.Fatalf("helm uninstall: %v\n%s", err, describeNamespace())
	}
}

// describeNamespace says what a failed wait needs: the operator
// namespace's pods with their nodes, phases and container states, the
// end of each container's log, and the namespace's events.
func describeNamespace() string {
	ctx := context.Background()
	var b strings.Builder
	pods, err := env.Clientset.CoreV1().Pods(namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		return err.Error()
	}
	for _, p := range pods.Items {
		fmt.Fprintf(&b, "pod %s on %q: %s %s\n", p.Name, p.Spec.NodeName, p.Status.Phase, p.Status.Message)
		for _, c := range p.Status.Conditions {
			fmt.Fprintf(&b, "  %s=%s %s %s\n", c.Type, c.Status, c.Reason, c.Message)
		}
		for _, cs := range append(p.Status.InitContainerStatuses, p.Status.ContainerStatuses...) {
			fmt.Fprintf(&b, "  container %s: ready %v, restarts %d, state %+v, last %+v\n", cs.Name, cs.Ready, cs.RestartCount, cs.State, cs.LastTerminationState)
			logs, err := env.Clientset.CoreV1().Pods(namespace).GetLogs(p.Name, &corev1.PodLogOptions{Container: cs.Name}).DoRaw(ctx)
			fmt.Fprintf(&b, "  log (%v):\n%s\n", err, firstLines(string(logs), 40))
		}
	}
	rollouts, err := env.Kubectl("get", "skyhooks", "-o", `jsonpath={range .items[*]}{.metadata.name}: {.status.status} {.status.completeNodes} {.status.nodesNeedingAttention} {.status.conditions}{"\n"}{end}`)
	fmt.Fprintf(&b, "skyhooks (%v):\n%s\n", err, rollouts)
	events, err := env.Clientset.CoreV1().Events(namespace).List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range events.Items {
			fmt.Fprintf(&b, "event %s %s/%s: %s %s\n", e.Type, e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Reason, e.Message)
		}
	}
	return b.String()
}

// firstLines are the log's first and last n lines but the failed health
// checks, which repeat.
func firstLines(log string, n int) string {
	var kept []string
	for _, line := range strings.Split(log, "\n") {
		if !strings.Contains(line, "healthz check failed") {
			kept = append(kept, line)
		}
	}
	if len(kept) > 2*n {
		kept = append(append(kept[:n:n], "…"), kept[len(kept)-n:]...)
	}
	return strings.Join(kept, "\n")
}

// helmUpgrade is `helm upgrade skyhook-operator --wait` to build b.
func helmUpgrade(t testing.TB, b build) {
	t.Helper()
	upgrade := action.NewUpgrade(helmActions(t))
	upgrade.Namespace = namespace
	upgrade.Wait, upgrade.Timeout = true, helmTimeout
	if _, err := upgrade.Run(releaseName, operatorChart(t), values(b)); err != nil {
		t.Fatalf("helm upgrade: %v\n%s", err, describeNamespace())
	}
}

// helmRollback is `helm rollback skyhook-operator REVISION --wait`.
func helmRollback(t testing.TB, revision int) {
	t.Helper()
	rollback := action.NewRollback(helmActions(t))
	rollback.Version = revision
	rollback.Wait, rollback.Timeout = true, helmTimeout
	if err := rollback.Run(releaseName); err != nil {
		t.Fatalf("helm rollback: %v\n%s", err, describeNamespace())
	}
}
