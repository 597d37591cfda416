package main

import (
	"bytes"
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/agent/modelog"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

const logsNode = "logs-node"

// stagePods makes a Skyhook "logs" with package tuning and, on logsNode,
// the stage pods the operator would make for its apply stage: the first
// try fails (exit 2), the second keeps running (KWOK does not end it).
func stagePods(t *testing.T) (failed, running *corev1.Pod) {
	t.Helper()
	ctx := context.Background()
	c := stagePodsNode(t, logsNode)
	pkg := skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.0.0"}, Image: "ghcr.io/x/tuning"}
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "logs"}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": pkg}}}
	if err := c.Create(ctx, sk); err != nil { // the stage pods' owner: without it the garbage collector takes them
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	spec := stagepod.Spec{Skyhook: sk, Package: "tuning", Version: "1.0.0", Image: pkg.Image, Stage: skyhookv1.StageApply,
		Node: logsNode, Namespace: "skyhook", AgentImage: "ghcr.io/x/agent:1.0.0", PauseImage: "registry.k8s.io/pause:3.10"}
	spec.Definition = pkg
	spec.Definition.Env = []corev1.EnvVar{{Name: simnode.ExitCodeEnv, Value: "2"}}
	failed = stagepod.Build(spec)
	spec.Attempt = 1
	spec.Definition.Env = []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1h"}}
	running = stagepod.Build(spec)
	for _, p := range []*corev1.Pod{failed, running} {
		if err := c.Create(ctx, p); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { deletePod(t, p) })
	}
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(failed), failed)
		return err == nil && failed.Status.Phase == corev1.PodFailed, nil
	}); err != nil {
		t.Fatalf("the first try did not fail: %v", failed.Status)
	}
	// The second try as the simulated kubelet reports it while the agent
	// runs (for an hour): the copy done, the apply container running.
	apply := stagepod.StageContainer("tuning", skyhookv1.StageApply)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(running), running)
		statuses := running.Status.InitContainerStatuses
		return err == nil && len(statuses) == len(running.Spec.InitContainers) && statuses[1].Name == apply && statuses[1].State.Running != nil, nil
	}); err != nil {
		t.Fatalf("the second try's %s container is not running: %+v", apply, running.Status)
	}
	for _, l := range []struct{ pod, container, line string }{
		{failed.Name, "tuning-init", "copied /skyhook-package"},
		{failed.Name, apply, "2026-11-21T10:00:00Z [install.sh] stdout: installing tuning 1.0.0"},
		{failed.Name, apply, "2026-11-21T10:00:01Z [install.sh] stderr: sysctl: permission denied"},
		{running.Name, "tuning-init", "copied /skyhook-package"},
		{running.Name, apply, "2026-11-21T10:01:00Z [install.sh] stdout: installing tuning 1.0.0"},
	} {
		if err := env.WriteContainerLog(ctx, "skyhook", l.pod, l.container, l.line); err != nil {
			t.Fatal(err)
		}
	}
	return failed, running
}

// stagePodsNode makes a simulated node for stage pods made by hand (gone
// when the test ends) and the namespace "skyhook" they go in, and returns
// a client.
func stagePodsNode(t *testing.T, node string) client.Client {
	t.Helper()
	ctx := context.Background()
	c := testenv.Client(t, env)
	if err := env.CreateNodes(ctx, simnode.Node{Name: node}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), &corev1.Node{ObjectMeta: objectMeta(node)}) })
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "skyhook"}}); err != nil && !apierrors.IsAlreadyExists(err) {
		t.Fatal(err)
	}
	return c
}

// deletePod removes the pod at once (grace period 0), as a finished stage
// pod goes.
func deletePod(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	zero := int64(0)
	if err := testenv.Client(t, env).Delete(context.Background(), pod, &client.DeleteOptions{GracePeriodSeconds: &zero}); client.IgnoreNotFound(err) != nil {
		t.Fatal(err)
	}
}

func TestPackageLogs(t *testing.T) {
	failed, running := stagePods(t)

	// Every pod of the stage, newest first, separated by ---.
	out, err := run(t, withCluster("package", "logs", "tuning", "--node", logsNode, "--stage", "apply")...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if first, second := strings.Index(out, running.Name+" tuning-apply: running"), strings.Index(out, failed.Name+" tuning-apply: exited 2"); first < 0 || second < first {
		t.Errorf("not both tries, the newest first:\n%s", out)
	}
	golden(t, "package-logs-all.golden", out)

	// One container of each try, as kubectl logs prints it; --node as a
	// pattern; -n the stage pods' namespace; --tail. -c takes the
	// container's name or, as this operator's releases before NodeWright's
	// names had them, the stage's.
	for _, container := range []string{"tuning-apply", "apply"} {
		out, err = run(t, withCluster("-n", "skyhook", "package", "logs", "tuning", "--node", "logs-.*", "--skyhook", "logs", "-c", container)...)
		if err != nil || strings.Count(out, "installing") != 2 || !strings.Contains(out, "\n---\n") || strings.Contains(out, "==>") {
			t.Fatalf("-c %s: %v\n%s", container, err, out)
		}
	}
	if out := mustRun(t, "-n", "elsewhere", "package", "logs", "tuning", "--nodewright", "logs"); !strings.HasPrefix(out, "No pods matched the specified filters\n") {
		t.Errorf("-n of a namespace without the pods:\n%s", out)
	}
	out, err = run(t, withCluster("package", "logs", "tuning", "-c", "apply", "--tail", "1", "--stage", "apply")...)
	if err != nil || strings.Count(out, "installing") != 1 || !strings.Contains(out, "permission denied") {
		t.Fatalf("--tail 1: %v\n%s", err, out)
	}

	// The failed try stays readable once its pod is the only one.
	deletePod(t, running)
	out, err = run(t, withCluster("package", "logs", "tuning", "--node", logsNode)...)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, failed.Name+" tuning-apply: exited 2") || !strings.Contains(out, "permission denied") {
		t.Errorf("the failed try's logs:\n%s", out)
	}
	golden(t, "package-logs-failed.golden", out)

	// No pod: a message, not an error.
	for _, args := range [][]string{
		{"package", "logs", "tuning", "--node", logsNode, "--stage", "config"},
		{"package", "logs", "other"},
		{"package", "logs", "tuning", "--node", "other-node"},
		{"package", "logs", "tuning", "--skyhook", "other"},
	} {
		out, err := run(t, withCluster(args...)...)
		if err != nil || !strings.HasPrefix(out, "No pods matched the specified filters\n") || !strings.Contains(out, "/var/log/skyhook/<skyhook>/") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}
	for _, bad := range []struct {
		args []string
		want string
	}{
		{[]string{"package", "logs", "tuning", "--node", logsNode, "--stage", "install"}, `invalid stage "install"`},
		{[]string{"package", "logs", "tuning", "--node", logsNode, "-c", "agent"}, "has the containers tuning-init, tuning-apply"},
	} {
		if out, err := run(t, withCluster(bad.args...)...); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%v: %v, want an error with %q\n%s", bad.args, err, bad.want, out)
		}
	}
}

// -f prints what the running agent writes as it writes it.
func TestPackageLogsFollow(t *testing.T) {
	_, running := stagePods(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out syncBuffer
	done := make(chan error, 1)
	go func() {
		cmd := newRootCommand()
		cmd.SetOut(&out)
		cmd.SetErr(&out)
		cmd.SetArgs(withCluster("package", "logs", "tuning", "--node", logsNode, "-f"))
		done <- cmd.ExecuteContext(ctx)
	}()
	waitOutput(t, &out, "installing tuning 1.0.0")
	if err := env.WriteContainerLog(ctx, "skyhook", running.Name, "tuning-apply", "2026-11-21T10:01:05Z [install.sh] stdout: done"); err != nil {
		t.Fatal(err)
	}
	waitOutput(t, &out, "stdout: done")
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("interrupting -f: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("-f did not end when interrupted")
	}
}

func waitOutput(t *testing.T, out *syncBuffer, want string) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 20*time.Second, true, func(context.Context) (bool, error) {
		return strings.Contains(out.String(), want), nil
	})
	if err != nil {
		t.Fatalf("no %q in the output:\n%s", want, out.String())
	}
}

// syncBuffer is a bytes.Buffer a running command writes while the test
// reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// --nodewright NAME selects the stage pods of either kind of that name: a
// NodeWright's carry its kind's owner label.
func TestStagePodOwnedBy(t *testing.T) {
	pod := func(labels map[string]string) *corev1.Pod {
		return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: labels}}
	}
	for _, c := range []struct {
		labels map[string]string
		want   bool
	}{
		{map[string]string{stagepod.OwnerLabel(skyhookv1.NodeWrights): "gpu"}, true},
		{map[string]string{stagepod.SkyhookLabel: "gpu"}, true},
		{map[string]string{stagepod.OwnerLabel(skyhookv1.NodeWrights): "other"}, false},
		{map[string]string{stagepod.NameLabel: "gpu"}, false}, // not an owner label
	} {
		if got := ownedBy(pod(c.labels), "gpu"); got != c.want {
			t.Errorf("ownedBy(%v, gpu) = %v, want %v", c.labels, got, c.want)
		}
	}
}

// A package that runs after another in one pod (a pod of several
// packages): package logs finds its containers there, and only its.
func TestPackageLogsFindsAPackageInAPodOfSeveral(t *testing.T) {
	const node = "shared-logs-node"
	ctx := context.Background()
	c := stagePodsNode(t, node)
	tuning := skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.0.0"}, Image: "ghcr.io/x/tuning",
		Env: []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "100ms"}}}
	driver := skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: "driver", Version: "2.0.0"}, Image: "ghcr.io/x/driver",
		Env: []corev1.EnvVar{{Name: simnode.DurationEnv, Value: "1h"}}}
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "shared-logs"}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": tuning, "driver": driver}}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	pod := podOfTwoPackages(t, sk, node, map[string]string{"tuning": "100ms", "driver": "1h"})
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePod(t, pod) })
	apply := stagepod.StageContainer("driver", skyhookv1.StageApply)
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		for _, s := range pod.Status.InitContainerStatuses {
			if s.Name == apply && s.State.Running != nil {
				return err == nil, nil
			}
		}
		return false, nil
	}); err != nil {
		t.Fatalf("%s is not running: %+v", apply, pod.Status)
	}
	for _, c := range pod.Spec.InitContainers { // the simulated kubelet serves a log once one is written
		line := "2026-11-27T06:00:00Z " + c.Name + " ran"
		if c.Name == apply {
			line = "2026-11-27T06:00:00Z [install.sh] stdout: installing driver 2.0.0"
		}
		if err := env.WriteContainerLog(ctx, "skyhook", pod.Name, c.Name, line); err != nil {
			t.Fatal(err)
		}
	}
	out := mustRun(t, "package", "logs", "driver", "--node", node)
	if !strings.Contains(out, pod.Name+" driver-apply: running") || !strings.Contains(out, "installing driver 2.0.0") || strings.Contains(out, " tuning-") {
		t.Errorf("driver's logs in the pod it shares with tuning:\n%s", out)
	}
	out = mustRun(t, "package", "logs", "tuning", "--node", node, "--stage", "config")
	if !strings.Contains(out, pod.Name+" tuning-config: exited 0") || strings.Contains(out, " driver-") {
		t.Errorf("tuning's config logs in the pod it shares with driver:\n%s", out)
	}
}

// podOfTwoPackages is the pod of two packages (tuning, then driver, each
// apply+config) that the last operator to make such pods (--package-runs,
// removed after commit 0d1ca9c) built, captured in stagepod's testdata,
// made the Skyhook's on the node, each package's stage containers running
// for the duration given.
func podOfTwoPackages(t *testing.T, sk *skyhookv1.Skyhook, node string, durations map[string]string) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("../../reconcile/stagepod/testdata/pod-of-two-packages.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		t.Fatal(err)
	}
	pod.Namespace, pod.Spec.NodeName = "skyhook", node
	pod.OwnerReferences = []metav1.OwnerReference{*metav1.NewControllerRef(sk, skyhookv1.GroupVersion.WithKind("Skyhook"))}
	pod.Labels[stagepod.SkyhookLabel], pod.Labels["skyhook.nvidia.com/name"], pod.Labels["skyhook.nvidia.com/node"] = sk.Name, sk.Name, node
	for i := range pod.Spec.InitContainers {
		c := &pod.Spec.InitContainers[i]
		if pkg, part, _ := strings.Cut(c.Name, "-"); part != "init" { // the package's env, as its agent containers have it
			c.Env = append(c.Env, corev1.EnvVar{Name: simnode.DurationEnv, Value: durations[pkg]})
		}
	}
	return &pod
}

// In the compact shape a stage's container runs the stage and then its
// check, a marker line before each: --check, and -c with the check's name
// (NodeWright's container name, or this operator's older mode name), print
// the check's part of that container's log alone.
func TestPackageLogsCutsTheCheckFromTheStageContainer(t *testing.T) {
	const node = "check-logs-node"
	ctx := context.Background()
	c := stagePodsNode(t, node)
	pkg := skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.0.0"}, Image: "ghcr.io/x/tuning"}
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "check-logs"}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": pkg}}}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	pod := stagepod.Build(stagepod.Spec{Skyhook: sk, Package: "tuning", Definition: pkg, Version: "1.0.0", Image: pkg.Image, Stage: skyhookv1.StageApply,
		Node: node, Namespace: "skyhook", AgentImage: "ghcr.io/x/agent:1.0.0", PauseImage: "registry.k8s.io/pause:3.10"})
	if err := c.Create(ctx, pod); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deletePod(t, pod) })
	if err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		err := c.Get(ctx, client.ObjectKeyFromObject(pod), pod)
		return err == nil && stagepod.Read(pod).Result == stagepod.Succeeded, nil
	}); err != nil {
		t.Fatalf("the stage pod did not finish: %+v", pod.Status)
	}
	for _, line := range []string{modelog.Marker("apply"), "2026-12-07T10:00:00Z [install.sh] stdout: installing tuning",
		modelog.Marker("apply-check"), "2026-12-07T10:00:01Z [verify.sh] stdout: tuning is in place"} {
		if err := env.WriteContainerLog(ctx, "skyhook", pod.Name, "tuning-apply", line); err != nil {
			t.Fatal(err)
		}
	}
	out := mustRun(t, "package", "logs", "tuning", "--node", node, "--check")
	if !strings.Contains(out, pod.Name+" tuning-apply (apply-check): exited 0") || !strings.Contains(out, "tuning is in place") || strings.Contains(out, "installing") {
		t.Errorf("--check: want the check's part of tuning-apply alone:\n%s", out)
	}
	for _, name := range []string{"tuning-applycheck", "apply-check"} {
		out := mustRun(t, "package", "logs", "tuning", "--node", node, "-c", name)
		if out != "2026-12-07T10:00:01Z [verify.sh] stdout: tuning is in place\n" {
			t.Errorf("-c %s: want the check's line alone, got:\n%s", name, out)
		}
	}
	out = mustRun(t, "package", "logs", "tuning", "--node", node, "-c", "tuning-apply")
	if !strings.Contains(out, "installing") || !strings.Contains(out, "tuning is in place") || !strings.Contains(out, modelog.Marker("apply-check")) {
		t.Errorf("-c tuning-apply: want the whole container's log, markers and all:\n%s", out)
	}
}

// Which container, or part of one, each name and option reads, in both
// shapes.
func TestLogPartsOfEitherShape(t *testing.T) {
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: "parts"}}
	build := func(shape stagepod.Shape) *corev1.Pod {
		return stagepod.Build(stagepod.Spec{Skyhook: sk, Package: "tuning", Version: "1.0.0", Image: "ghcr.io/x/tuning", Stage: skyhookv1.StageApply,
			Then: []skyhookv1.Stage{skyhookv1.StageConfig}, Node: "n", Namespace: "skyhook", Shape: shape})
	}
	compact, nodeWright := build(stagepod.Compact), build(stagepod.NodeWright)
	for _, c := range []struct {
		pod  *corev1.Pod
		name string
		want logPart
	}{
		{compact, "tuning-configcheck", logPart{Container: "tuning-config", Mode: "config-check"}},
		{compact, "config-check", logPart{Container: "tuning-config", Mode: "config-check"}},
		{compact, "config", logPart{Container: "tuning-config"}},
		{compact, "copy", logPart{Container: "tuning-init"}},
		{nodeWright, "tuning-configcheck", logPart{Container: "tuning-configcheck"}},
		{nodeWright, "config-check", logPart{Container: "tuning-configcheck"}},
	} {
		if got, ok := containerIn(c.pod, c.name); !ok || got != c.want {
			t.Errorf("%s pod, -c %s: %+v %v, want %+v", c.pod.Spec.InitContainers[2].Name, c.name, got, ok, c.want)
		}
	}
	if _, ok := containerIn(compact, "interrupt-check"); ok {
		t.Error("-c interrupt-check found a part: an interrupt has no check")
	}
	titles := func(parts []logPart) string {
		var out []string
		for _, p := range parts {
			out = append(out, p.title())
		}
		return strings.Join(out, ", ")
	}
	for _, c := range []struct {
		pod  *corev1.Pod
		o    logsOptions
		want string
	}{
		{compact, logsOptions{}, "tuning-init, tuning-apply, tuning-config"},
		{compact, logsOptions{stage: "config"}, "tuning-config"},
		{compact, logsOptions{check: true}, "tuning-apply (apply-check), tuning-config (config-check)"},
		{compact, logsOptions{check: true, stage: "apply"}, "tuning-apply (apply-check)"},
		{nodeWright, logsOptions{stage: "config"}, "tuning-config, tuning-configcheck"},
		{nodeWright, logsOptions{check: true}, "tuning-applycheck, tuning-configcheck"},
	} {
		if got := titles(partsToPrint(c.pod, c.o)); got != c.want {
			t.Errorf("%+v: prints %s, want %s", c.o, got, c.want)
		}
	}
}

// --tail on a check's part counts the part's lines, not the container's.
func TestLastLines(t *testing.T) {
	for _, c := range []struct {
		text string
		n    int64
		want string
	}{
		{"a\nb\nc\n", 2, "b\nc\n"},
		{"a\nb\nc\n", -1, "a\nb\nc\n"},
		{"a\nb", 1, "b"},
		{"a\n", 5, "a\n"},
		{"", 3, ""},
		{"a\nb\n", 0, ""},
	} {
		if got := lastLines(c.text, c.n); got != c.want {
			t.Errorf("lastLines(%q, %d) = %q, want %q", c.text, c.n, got, c.want)
		}
	}
}
