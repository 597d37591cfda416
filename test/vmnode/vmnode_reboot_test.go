package vmnode

import (
	"context"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"helm.sh/helm/v3/pkg/action"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/chartinstall"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// installedNamespace is where the chart installs the operator.
const installedNamespace = "skyhook-installed"

// leaseName is the operator's leader election Lease.
const leaseName = "skyhook-operator.skyhook.nvidia.com"

// TestRebootIsARealRebootWithTheOperatorOnTheMachines: a reboot is a
// reboot, with the operator installed with Helm as an admin would (its two
// replicas on the machines, its images from the registry, the apiserver
// reached through the kubernetes Service and kube-proxy, its webhooks
// called through its Service). A package whose interrupt is reboot rolls
// across both machines, one at a time: apply writes under /etc and asks
// for a kernel module through modules-load.d; the agent's `systemctl
// reboot` restarts each guest's kernel, the node comes back with another
// boot ID, post-interrupt runs in the new boot and finds the module
// loaded, the node is uncordoned and its record complete. The machine
// running the leader reboots too, so the Lease changes hands, and nothing
// runs twice: apply ran once on each machine, in the boot before,
// post-interrupt once, in the boot after.
func TestRebootIsARealRebootWithTheOperatorOnTheMachines(t *testing.T) {
	needMachines(t)
	op.Without(t)
	install(t)
	holders := watchLeaders(t)

	const name = "kernel"
	before := map[string]string{}
	for _, m := range machines {
		before[m.Name] = bootID(t, m)
	}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{kubeletnode.Label: vmnode.LabelValue}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: ptrTo(1)},
			Packages: map[string]skyhookv1.Package{name: {PackageRef: skyhookv1.PackageRef{Name: name, Version: "1.0.0"},
				Image: rebootPackage(t, name), Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}}},
		},
	}
	start := time.Now()
	create(t, sk)
	waitSkyhook(t, name, skyhookv1.StatusComplete, 40*time.Minute)
	t.Logf("rolled a reboot across %d machines in %s, the operator on them", len(machines), time.Since(start).Round(time.Second))

	if seen := holders(); len(seen) < 2 {
		t.Errorf("the Lease was held by %v through both machines' reboots; want it to change hands", seen)
	} else {
		t.Logf("the Lease was held in turn by %v", seen)
	}
	for _, m := range machines {
		rebootedOnce(t, m, name, before[m.Name])
	}
}

// rebootedOnce checks what the reboot package did on the machine: it
// rebooted (another boot ID), apply ran once, in the boot before,
// post-interrupt once, in the boot after, with the module loaded; the node
// is uncordoned and its record complete.
func rebootedOnce(t *testing.T, m *vmnode.Node, name, before string) {
	t.Helper()
	after := bootID(t, m)
	if after == before || after == "" {
		t.Errorf("the boot ID of %s is %q before and %q after: the machine did not reboot", m.Name, before, after)
		return
	}
	ranOnceIn(t, m, "/etc/skyhook-test/"+name+".apply", before, "apply")
	if post := strings.Fields(guestRun(t, m, "cat /etc/skyhook-test/"+name+".post")); len(post) != 2 || post[0] != after || post[1] != "dummy-loaded" {
		t.Errorf("on %s post-interrupt recorded %q, want once, in the new boot %s, with the module loaded", m.Name, post, after)
	}
	if nodeOf(t, m).Spec.Unschedulable {
		t.Errorf("%s is still cordoned after its package completed", m.Name)
	}
	if s, ok := packageState(t, m, name, name, "1.0.0"); !ok || s.State != skyhookv1.StateComplete {
		t.Errorf("%s records %+v, want the package complete", m.Name, s)
	}
}

// rebootPackage writes under the machine's /etc on apply (each run adds
// the boot ID it ran in, so a second run shows), asks for a kernel
// module that only a boot loads (modules-load.d), and on post-interrupt
// records the boot ID it ran in and whether the module is loaded.
func rebootPackage(t *testing.T, name string) string {
	return pushPackage(t, name, "1.0.0", map[string][]nodeimages.ShellStep{
		"apply": {nodeimages.Step("write", `mkdir -p /etc/skyhook-test
cat /proc/sys/kernel/random/boot_id >> /etc/skyhook-test/`+name+`.apply
echo dummy > /etc/modules-load.d/skyhook-test-`+name+`.conf
test ! -d /sys/module/dummy || { echo "dummy is loaded before the reboot"; exit 9; }`)},
		"apply-check":          {nodeimages.Step("written", `test -s /etc/skyhook-test/`+name+`.apply`)},
		"post-interrupt":       {nodeimages.Step("after-boot", `{ cat /proc/sys/kernel/random/boot_id; test -d /sys/module/dummy && echo dummy-loaded; } >> /etc/skyhook-test/`+name+`.post`)},
		"post-interrupt-check": {nodeimages.Step("recorded", `test -s /etc/skyhook-test/`+name+`.post`)},
	})
}

// install installs the chart into installedNamespace for the test, the
// CRDs left as the cluster has them, and uninstalls it when the test ends
// (after the test's Skyhooks are gone: cleanups run last first).
func install(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	refs, err := registry.PushComponents(ctx, "vmnode")
	must(t, err)
	// The chart takes a repository and a tag.
	operatorRepo, _, _ := strings.Cut(refs["operator"], "@")
	agentRepo, _, _ := strings.Cut(refs["agent"], "@")
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: installedNamespace, Labels: map[string]string{"pod-security.kubernetes.io/enforce": "privileged"}}}
	if _, err := env.Clientset.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	values := map[string]any{
		"crds":    map[string]any{"install": false},
		"cleanup": map[string]any{"enabled": false},
		"controllerManager": map[string]any{
			"selectors": map[string]any{kubeletnode.Label: vmnode.LabelValue},
			"manager": map[string]any{
				"image":     map[string]any{"repository": operatorRepo, "tag": "vmnode"},
				"agent":     map[string]any{"repository": agentRepo, "tag": "vmnode"},
				"env":       map[string]any{"pauseImage": images.pause},
				"resources": map[string]any{"requests": map[string]any{"cpu": "50m", "memory": "128Mi"}, "limits": map[string]any{"memory": "512Mi"}},
			},
		},
	}
	cfg, err := chartinstall.Actions(env.Kubeconfig, installedNamespace, io.Discard)
	must(t, err)
	started := time.Now()
	if err := chartinstall.Install(cfg, installedNamespace, values, 15*time.Minute); err != nil {
		out, _ := env.Kubectl("get", "pods", "-A", "-o", "wide")
		t.Fatalf("helm install: %v\n%s", err, out)
	}
	t.Logf("helm install --wait on the machines: %s", time.Since(started).Round(time.Second))
	t.Cleanup(func() { uninstall(t, cfg) })
}

// uninstall is `helm uninstall --wait`; the webhook configurations the
// installed operator pointed at its Service go with the restarted
// in-process operator, which points them back at itself.
func uninstall(t *testing.T, cfg *action.Configuration) {
	u := action.NewUninstall(cfg)
	u.Wait, u.Timeout = true, 5*time.Minute
	if _, err := u.Run(chartinstall.ReleaseName); err != nil {
		t.Errorf("helm uninstall: %v", err)
	}
}

// watchLeaders follows the operator's Lease until the test ends; the
// returned function lists the pods that held it, in turn.
func watchLeaders(t *testing.T) func() []string {
	var mu sync.Mutex
	var seen []string
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ctx.Err() == nil {
			lease, err := env.Clientset.CoordinationV1().Leases(installedNamespace).Get(ctx, leaseName, metav1.GetOptions{})
			if err == nil && lease.Spec.HolderIdentity != nil && *lease.Spec.HolderIdentity != "" {
				pod, _, _ := strings.Cut(*lease.Spec.HolderIdentity, "_")
				mu.Lock()
				if len(seen) == 0 || seen[len(seen)-1] != pod {
					seen = append(seen, pod)
				}
				mu.Unlock()
			}
			select {
			case <-ctx.Done():
			case <-time.After(2 * time.Second):
			}
		}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), seen...)
	}
}

func ptrTo[T any](v T) *T { return &v }
