package stagepod

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func spec() Spec {
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "demo", UID: "u1", Generation: 3},
		Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{"tuning": {
			PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: "1.1.0"},
			Image:      "ghcr.io/nvidia/skyhook-packages/shellscript",
			Env:        []corev1.EnvVar{{Name: "CSP", Value: "azure"}},
		}}},
	}
	return Spec{Skyhook: sk, Package: "tuning", Definition: sk.Spec.Packages["tuning"], Version: "1.1.0", Image: sk.Spec.Packages["tuning"].Image, Stage: skyhookv1.StageApply,
		Node: "node-1", Namespace: "skyhook-system", AgentImage: "ghcr.io/skyhook/agent:1", PauseImage: "pause:3.10", ConfigMap: "demo-tuning"}
}

func TestBuild(t *testing.T) {
	pod := Build(spec())
	if pod.Spec.NodeName != "node-1" || !pod.Spec.HostPID || !pod.Spec.HostNetwork || pod.Spec.RestartPolicy != corev1.RestartPolicyNever || pod.Namespace != "skyhook-system" {
		t.Fatalf("pod placement: %+v", pod.Spec)
	}
	if pod.Spec.ImagePullSecrets != nil {
		t.Errorf("pull secrets %v without any configured", pod.Spec.ImagePullSecrets)
	}
	names := []string{}
	for _, c := range pod.Spec.InitContainers {
		names = append(names, c.Name)
	}
	if strings.Join(names, ",") != "tuning-init,tuning-apply" {
		t.Fatalf("init containers %v, want the copy and the stage (with its check): <package>-init, <package>-<stage>", names)
	}
	if img := pod.Spec.InitContainers[0].Image; img != "ghcr.io/nvidia/skyhook-packages/shellscript:1.1.0" {
		t.Errorf("copy image %s", img)
	}
	// The copy container copies the image's /skyhook-package whole: a
	// mount under it would hide files the image ships there (NodeWright
	// v0.17 mounts the configMap key by key for that, issue #208).
	for _, m := range pod.Spec.InitContainers[0].VolumeMounts {
		if strings.HasPrefix(m.MountPath, "/skyhook-package") {
			t.Errorf("copy container mounts %s over the image's files", m.MountPath)
		}
	}
	agent := pod.Spec.InitContainers[1]
	if agent.Image != "ghcr.io/skyhook/agent:1" || strings.Join(agent.Args, " ") != "apply,apply-check /root /root/var/lib/skyhook/demo/tuning/1.1.0/3" {
		t.Errorf("agent %s %v, want the stage then its check in one container", agent.Image, agent.Args)
	}
	var csp, order bool
	for _, e := range agent.Env {
		csp = csp || (e.Name == "CSP" && e.Value == "azure")
		order = order || (e.Name == "SKYHOOK_NODE_ORDER" && e.Value == "0")
	}
	if !csp || !order || agent.SecurityContext == nil || !*agent.SecurityContext.Privileged {
		t.Errorf("agent env %v (want CSP and SKYHOOK_NODE_ORDER), security %v", agent.Env, agent.SecurityContext)
	}
	if pod.Labels[NameLabel] != "demo" || pod.Labels[SkyhookLabel] != "demo" {
		t.Errorf("labels %v: want the Skyhook under this project's key and NodeWright's", pod.Labels)
	}
	if len(pod.OwnerReferences) != 1 || pod.OwnerReferences[0].UID != "u1" {
		t.Errorf("owner %v", pod.OwnerReferences)
	}
	if len(pod.Name) > 63 || !strings.HasPrefix(pod.Name, "demo-tuning-apply-") {
		t.Errorf("name %s", pod.Name)
	}
	s := spec()
	s.Attempt = 1
	if Build(s).Name == pod.Name {
		t.Error("a retry has the same pod name")
	}
	s.Stage = skyhookv1.StageInterrupt
	s.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptService, Services: []string{"containerd", "kubelet"}}
	interrupt := Build(s)
	if c := interrupt.Spec.InitContainers; len(c) != 2 || c[0].Name != "tuning-init" || c[1].Name != "interrupt" {
		t.Errorf("interrupt stage has init containers %+v, want tuning-init and interrupt (NodeWright's name; no check mode)", c)
	}
	if args := interrupt.Spec.InitContainers[1].Args; len(args) != 4 || args[3] != `{"type":"service","services":["containerd","kubelet"]}` {
		t.Errorf("interrupt args %q, want the mode, host root, copy dir and the merged interrupt as JSON", args)
	}
	s.Stage = skyhookv1.StageUninstallInterrupt
	after := Build(s)
	if c := after.Spec.InitContainers; len(c) != 2 || c[1].Name != "uninstall-interrupt" || c[1].Args[0] != "interrupt" || len(c[1].Args) != 4 {
		t.Errorf("uninstall interrupt containers %+v, want one named uninstall-interrupt running the agent's interrupt mode with the interrupt", c)
	}
	if after.Labels[StageLabel] != "uninstall-interrupt" {
		t.Errorf("stage label %q", after.Labels[StageLabel])
	}
}

// The NodeWright shape gives the check a container of its own, named as
// NodeWright names it, running the check mode alone.
func TestBuildInNodeWrightShape(t *testing.T) {
	s := spec()
	s.Shape = NodeWright
	s.Then = []skyhookv1.Stage{skyhookv1.StageConfig}
	pod := Build(s)
	var got []string
	for _, c := range pod.Spec.InitContainers {
		mode := "copy"
		if len(c.Args) > 0 {
			mode = c.Args[0]
		}
		got = append(got, c.Name+":"+mode)
	}
	want := "tuning-init:copy,tuning-apply:apply,tuning-applycheck:apply-check,tuning-config:config,tuning-configcheck:config-check"
	if strings.Join(got, ",") != want {
		t.Errorf("containers and modes %v, want %s", got, want)
	}
	s.Then, s.Stage = nil, skyhookv1.StageInterrupt
	if c := Build(s).Spec.InitContainers; len(c) != 2 || c[1].Name != "interrupt" || c[1].Args[0] != "interrupt" {
		t.Errorf("interrupt containers %+v: an interrupt has no check in either shape", c)
	}
}

func TestParseShape(t *testing.T) {
	for name, want := range map[string]Shape{"": Compact, "compact": Compact, "nodewright": NodeWright} {
		if got, err := ParseShape(name); err != nil || got != want {
			t.Errorf("ParseShape(%q) = %q, %v; want %q", name, got, err, want)
		}
	}
	for _, bad := range []string{"NodeWright", "five", "compact "} {
		if _, err := ParseShape(bad); err == nil || !strings.Contains(err.Error(), "want compact or nodewright") {
			t.Errorf("ParseShape(%q): %v, want an error naming the shapes", bad, err)
		}
	}
}

// allExited is the status of a pod whose init containers all exited 0.
func allExited(pod *corev1.Pod) []corev1.ContainerStatus {
	var out []corev1.ContainerStatus
	for _, c := range pod.Spec.InitContainers {
		out = append(out, corev1.ContainerStatus{Name: c.Name, State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{}}})
	}
	return out
}

func TestPackageImage(t *testing.T) {
	const sha = "1111111111111111111111111111111111111111111111111111111111111111"
	cases := []struct{ image, version, containerSHA, want string }{
		{"ghcr.io/x/p", "1.2.0", "", "ghcr.io/x/p:1.2.0"},
		{"ghcr.io/x/p:0.9.0", "1.2.0", "", "ghcr.io/x/p:1.2.0"}, // the version wins over a tag, as upstream
		{"registry:5000/x/p", "1.2.0", "", "registry:5000/x/p:1.2.0"},
		{"ghcr.io/x/p", "1.2.0", "sha256:" + sha, "ghcr.io/x/p@sha256:" + sha},
		{"ghcr.io/x/p", "1.2.0", sha, "ghcr.io/x/p@sha256:" + sha},
		{"ghcr.io/x/p@sha256:" + sha, "1.2.0", "", "ghcr.io/x/p@sha256:" + sha},
	}
	for _, tc := range cases {
		if got := packageImage(tc.image, tc.version, tc.containerSHA); got != tc.want {
			t.Errorf("packageImage(%q, %q, %q) = %q, want %q", tc.image, tc.version, tc.containerSHA, got, tc.want)
		}
	}
}

func TestRead(t *testing.T) {
	terminated := func(code int32) corev1.ContainerState {
		return corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: code, Reason: "Error"}}
	}
	pod := Build(spec())
	if got := Read(pod).Result; got != Running {
		t.Fatalf("fresh pod: %v", got)
	}
	pod.Status.InitContainerStatuses = allExited(pod)
	if got := Read(pod).Result; got != Succeeded {
		t.Fatalf("all exited 0: %v", got)
	}
	pod.Status.InitContainerStatuses[1] = corev1.ContainerStatus{Name: "apply", LastTerminationState: terminated(3), State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "CrashLoopBackOff"}}}
	if got := Read(pod); got.Result != Failed || got.ExitCode != 3 || got.Container != "apply" {
		t.Fatalf("exit 3 in last state: %+v", got)
	}
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "copy", Image: "x.invalid/p", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "ErrImagePull", Message: "no such host"}}}}
	if got := Read(pod); got.Result != ImagePullFailed || !strings.Contains(got.Message, "no such host") {
		t.Fatalf("image pull: %+v", got)
	}
}

// Not every failed pod is a failed stage, as NodeWright v0.20 counts them:
// a pod the kubelet refused to admit (Failed, no container ever started)
// ran nothing of the package; a pod disrupted (DisruptionTarget) was taken
// away, even if its step exited non-zero as it was killed. A deadline is
// the package's, started or not.
func TestReadTellsRefusalsAndDisruptionsFromFailures(t *testing.T) {
	failed := func(reason string, statuses ...corev1.ContainerStatus) *corev1.Pod {
		pod := Build(spec())
		pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, reason, "Pod was rejected: Node didn't have enough resource: cpu"
		pod.Status.InitContainerStatuses = statuses
		return pod
	}
	waiting := corev1.ContainerStatus{Name: "copy", State: corev1.ContainerState{Waiting: &corev1.ContainerStateWaiting{Reason: "PodInitializing"}}}
	killed := corev1.ContainerStatus{Name: "apply", State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 143, Reason: "Error"}}}
	preempted := failed("Preempting", killed)
	preempted.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: "TerminationByKubelet", Message: "Pod was preempted"}}
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want Result
		says string
	}{
		{"refused, no statuses", failed("OutOfcpu"), Refused, "the kubelet refused the pod: OutOfcpu"},
		{"refused, containers waiting", failed("NodeAffinity", waiting), Refused, "NodeAffinity"},
		{"a step that ran and failed", failed("", killed), Failed, "exited with code 143"},
		{"preempted while its step ran", preempted, Disrupted, "disrupted (TerminationByKubelet): Pod was preempted"},
		{"deadline before any container started", failed(DeadlineExceeded), Failed, "did not finish within the stage timeout"},
	} {
		got := Read(c.pod)
		if got.Result != c.want || !strings.Contains(got.Message, c.says) {
			t.Errorf("%s: %v %q, want %v saying %q", c.name, got.Result, got.Message, c.want, c.says)
		}
	}
	evicting := Build(spec())
	evicting.Status.Phase, evicting.Status.Conditions = corev1.PodRunning, preempted.Status.Conditions
	if got := Read(evicting).Result; got != Running {
		t.Errorf("a running pod marked for eviction: %v, want Running until it fails or goes", got)
	}
	done := Build(spec())
	done.Status.Phase = corev1.PodSucceeded
	done.Status.Conditions = preempted.Status.Conditions
	done.Status.InitContainerStatuses = allExited(done)
	if got := Read(done).Result; got != Succeeded {
		t.Errorf("a pod that finished before its disruption: %v, want Succeeded", got)
	}
}

// A kubelet shutting its node down gracefully marks the pods it stops as
// the kubelet's own preemption does, but for the pod's reason: only that
// reason says the node went down.
func TestEndedByNodeShutdown(t *testing.T) {
	ended := func(reason string) *corev1.Pod {
		pod := Build(spec())
		pod.Status.Phase, pod.Status.Reason = corev1.PodFailed, reason
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.DisruptionTarget, Status: corev1.ConditionTrue, Reason: corev1.PodReasonTerminationByKubelet}}
		return pod
	}
	evicted := ended("Terminated")
	evicted.Status.Conditions[0].Reason = "EvictionByEvictionAPI"
	for _, c := range []struct {
		name string
		pod  *corev1.Pod
		want bool
	}{
		{"node shutdown", ended("Terminated"), true},
		{"the kubelet's preemption", ended("Preempting"), false},
		{"an eviction", evicted, false},
		{"a failure", func() *corev1.Pod { p := ended("Terminated"); p.Status.Conditions = nil; return p }(), false},
	} {
		if got := EndedByNodeShutdown(c.pod); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestConfigHashTellsChangedKeys(t *testing.T) {
	before := ConfigHash(map[string]string{"kernel.conf": "a", "notes.txt": "x", "gone.conf": "1"})
	after := ConfigHash(map[string]string{"kernel.conf": "b", "notes.txt": "x", "new.conf": "2"})
	if before == after || ConfigHash(map[string]string{"notes.txt": "x", "kernel.conf": "a", "gone.conf": "1"}) != before {
		t.Fatalf("hashes: %q, %q", before, after)
	}
	if got := ChangedKeys(before, after); !slices.Equal(got, []string{"gone.conf", "kernel.conf", "new.conf"}) {
		t.Errorf("changed %v, want gone.conf, kernel.conf and new.conf", got)
	}
	if got := ChangedKeys("0123456789abcdef", after); !slices.Equal(got, []string{"kernel.conf", "new.conf", "notes.txt"}) {
		t.Errorf("from an unreadable hash: %v, want every key", got)
	}
	if ConfigHash(nil) != "" {
		t.Error("the empty configMap has a hash")
	}
}

func TestStagePodsTolerateTheConfiguredRuntimeTaint(t *testing.T) {
	custom := corev1.Taint{Key: "example.com/runtime", Value: "pending", Effect: corev1.TaintEffectNoExecute}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: []corev1.Taint{custom, DefaultRuntimeRequiredTaint}}}
	sk := spec().Skyhook
	got := Untolerated(sk, node, []corev1.Taint{custom})
	if len(got) != 1 || got[0].Key != DefaultRuntimeRequiredTaint.Key {
		t.Errorf("untolerated %v, want only the default taint once another is configured", got)
	}
	s := spec()
	s.RuntimeRequiredTaints = []corev1.Taint{custom}
	tol := Build(s).Spec.Tolerations[0]
	if tol.Key != custom.Key || tol.Value != custom.Value || tol.Effect != custom.Effect {
		t.Errorf("first toleration %+v, want the configured taint", tol)
	}
}

// Stage pods of either kind tolerate both kinds' default runtime-required
// taints (NodeWright v0.18 moved its default key to nodewright.nvidia.com
// and still tolerates the old one).
func TestStagePodsTolerateEveryKindsRuntimeTaint(t *testing.T) {
	defaults := DefaultRuntimeRequiredTaints()
	if len(defaults) != 2 || defaults[0].Key != "skyhook.nvidia.com" || defaults[1].Key != "nodewright.nvidia.com" || defaults[1].Value != "runtime-required" {
		t.Fatalf("defaults %v", defaults)
	}
	node := &corev1.Node{Spec: corev1.NodeSpec{Taints: defaults}}
	if got := Untolerated(spec().Skyhook, node, defaults); len(got) != 0 {
		t.Errorf("untolerated %v", got)
	}
}

// A stage pod carries its timeout as activeDeadlineSeconds; the kubelet's
// DeadlineExceeded reads as a failure naming the timeout; the stage's
// deadline counts from the pod's start.
func TestStageTimeout(t *testing.T) {
	s := spec()
	if pod := Build(s); pod.Spec.ActiveDeadlineSeconds != nil {
		t.Errorf("no timeout, deadline %d", *pod.Spec.ActiveDeadlineSeconds)
	}
	s.Timeout = 90 * time.Second
	pod := Build(s)
	if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != 90 {
		t.Fatalf("deadline %v, want 90", d)
	}
	start := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	pod.CreationTimestamp = metav1.NewTime(start.Add(-time.Minute))
	pod.Status.StartTime = &metav1.Time{Time: start} // the deadline counts from the start
	if d, ok := StageDeadline(pod, skyhookv1.StageApply); !ok || !d.Equal(start.Add(90*time.Second)) {
		t.Errorf("deadline %v (%v), want %v: 90 s from the start", d, ok, start.Add(90*time.Second))
	}
	if got := StageTimeout(pod); got != 90*time.Second {
		t.Errorf("StageTimeout %v, want 90s", got)
	}
	pod.Status.Phase, pod.Status.Reason, pod.Status.Message = corev1.PodFailed, DeadlineExceeded, "Pod was active on the node longer than the specified deadline"
	if got := Read(pod); got.Result != Failed || !strings.Contains(got.Message, "did not finish within the stage timeout (90s)") {
		t.Errorf("deadline exceeded: %+v", got)
	}
}

// The pod snapshots the node's labels and annotations and the Skyhook's
// packages into annotations, which a downward API volume mounted in the
// agent containers turns into node-metadata/*.json.
func TestNodeMetadata(t *testing.T) {
	s := spec()
	s.NodeLabels = map[string]string{"pool": "gpu"}
	s.NodeAnnotations = map[string]string{"small": "x", "huge": strings.Repeat("y", maxAnnotationValue+1)}
	pod := Build(s)
	if got := pod.Annotations[NodeLabelsAnnotation]; got != `{"pool":"gpu"}` {
		t.Errorf("labels.json: %s", got)
	}
	var annotations map[string]string
	if err := json.Unmarshal([]byte(pod.Annotations[NodeAnnotationsAnnotation]), &annotations); err != nil || annotations["small"] != "x" ||
		!strings.HasPrefix(annotations["huge"], "(omitted by Skyhook: 16385 bytes") {
		t.Errorf("annotations.json: %v %v", err, annotations)
	}
	var pkgs packagesMetadata
	if err := json.Unmarshal([]byte(pod.Annotations[PackagesAnnotation]), &pkgs); err != nil || pkgs.AgentVersion != "1" ||
		pkgs.Packages["tuning"].Version != "1.1.0" || pkgs.Packages["tuning"].Image != "ghcr.io/nvidia/skyhook-packages/shellscript" {
		t.Errorf("packages.json: %v %+v", err, pkgs)
	}
	var volume *corev1.Volume
	for i := range pod.Spec.Volumes {
		if pod.Spec.Volumes[i].Name == "node-metadata" {
			volume = &pod.Spec.Volumes[i]
		}
	}
	if volume == nil || volume.DownwardAPI == nil || len(volume.DownwardAPI.Items) != 3 ||
		volume.DownwardAPI.Items[0].FieldRef.FieldPath != "metadata.annotations['skyhook.nvidia.com/node-labels']" {
		t.Fatalf("node-metadata volume: %+v", volume)
	}
	for _, c := range pod.Spec.InitContainers[1:] {
		if !slices.ContainsFunc(c.VolumeMounts, func(m corev1.VolumeMount) bool { return m.Name == "node-metadata" && m.MountPath == NodeMetadataDir }) {
			t.Errorf("container %s does not mount the node metadata", c.Name)
		}
	}

	many := map[string]string{}
	for i := range 200 {
		many[fmt.Sprintf("key-%03d", i)] = strings.Repeat("v", 1000)
	}
	if got := boundedAnnotations(many); len(got) > maxAnnotationsJSON+1000 || !strings.Contains(got, "skyhook.nvidia.com/truncated") {
		t.Errorf("200 KB of annotations: %d bytes, truncated marker %v", len(got), strings.Contains(got, "truncated"))
	}
	for image, tag := range map[string]string{"ghcr.io/a/agent:1.2.0": "1.2.0", "registry:5000/agent": "", "ghcr.io/a/agent@sha256:ab": ""} {
		s.AgentImage = image
		var got packagesMetadata
		if err := json.Unmarshal([]byte(Build(s).Annotations[PackagesAnnotation]), &got); err != nil || got.AgentVersion != tag {
			t.Errorf("agentVersion of %s = %q (%v), want %q", image, got.AgentVersion, err, tag)
		}
	}
}

// The operator's image pull secrets reach every stage pod, so package,
// agent and pause images can come from a private registry (nvcr.io).
func TestStagePodsPullWithTheConfiguredSecrets(t *testing.T) {
	s := spec()
	s.ImagePullSecrets = []string{"nvcr", "mirror"}
	pod := Build(s)
	want := []corev1.LocalObjectReference{{Name: "nvcr"}, {Name: "mirror"}}
	if !slices.Equal(pod.Spec.ImagePullSecrets, want) {
		t.Fatalf("imagePullSecrets %v, want %v", pod.Spec.ImagePullSecrets, want)
	}
}
func TestFinishedAtIsTheLastContainerEnd(t *testing.T) {
	created := time.Now().Add(-time.Hour).Truncate(time.Second)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{CreationTimestamp: metav1.Time{Time: created}}}
	if got := FinishedAt(pod, time.Now()); !got.Equal(created) {
		t.Fatalf("no container ended: %s, want the creation %s", got, created)
	}
	ended := created.Add(10 * time.Minute)
	pod.Status.InitContainerStatuses = []corev1.ContainerStatus{{State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: created.Add(time.Minute)}}}}}
	pod.Status.ContainerStatuses = []corev1.ContainerStatus{{LastTerminationState: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{FinishedAt: metav1.Time{Time: ended}}}}}
	if got := FinishedAt(pod, time.Now()); !got.Equal(ended) {
		t.Fatalf("FinishedAt = %s, want the last end %s", got, ended)
	}
	deadline := int64(30 * 60)
	pod.Spec.ActiveDeadlineSeconds = &deadline
	pod.Status.ContainerStatuses = nil
	pod.Status.InitContainerStatuses = nil
	if got := FinishedAt(pod, time.Now()); !got.Equal(created.Add(30 * time.Minute)) {
		t.Fatalf("past its deadline with no container ended: %s, want the deadline", got)
	}
}

// A NodeWright's stage pod is owned by the NodeWright, named by the labels
// of its kind, and has a name of its own beside a Skyhook's of the same
// name.
func TestNodeWrightsStagePods(t *testing.T) {
	skyhooks := spec()
	nodewrights := spec()
	nodewrights.Skyhook = nodewrights.Skyhook.DeepCopy()
	nodewrights.Skyhook.TypeMeta = metav1.TypeMeta{APIVersion: "nodewright.nvidia.com/v1alpha1", Kind: "NodeWright"}
	pod := Build(nodewrights)
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "NodeWright" || owner.APIVersion != "nodewright.nvidia.com/v1alpha1" || owner.Name != "demo" {
		t.Fatalf("owner %+v", owner)
	}
	if pod.Labels["nodewright.nvidia.com/nodewright"] != "demo" || pod.Labels["nodewright.nvidia.com/name"] != "demo" ||
		pod.Labels[SkyhookLabel] != "" || pod.Labels[NameLabel] != "" || pod.Labels[StageLabel] != "apply" {
		t.Errorf("labels %v", pod.Labels)
	}
	if pod.Name == Build(skyhooks).Name {
		t.Errorf("the NodeWright's pod has the Skyhook's name %s", pod.Name)
	}
	if OwnerLabel(skyhookv1.NodeWrights) != "nodewright.nvidia.com/nodewright" || OwnerLabel(skyhookv1.Skyhooks) != SkyhookLabel {
		t.Errorf("owner labels %s, %s", OwnerLabel(skyhookv1.NodeWrights), OwnerLabel(skyhookv1.Skyhooks))
	}
}

// A Skyhook's stage pod adopted by its NodeWright twin is the twin's as if
// the twin had made it: found under its labels, owned by it.
func TestAdoptGivesAStagePodToTheTwin(t *testing.T) {
	s := spec()
	pod := Build(s)
	twin := s.Skyhook.DeepCopy()
	twin.TypeMeta = metav1.TypeMeta{APIVersion: "nodewright.nvidia.com/v1alpha1", Kind: "NodeWright"}
	twin.UID = "u2"
	if !Adopt(pod, twin) {
		t.Fatal("not adopted")
	}
	owner := metav1.GetControllerOf(pod)
	if owner == nil || owner.Kind != "NodeWright" || owner.UID != "u2" || len(pod.OwnerReferences) != 1 {
		t.Errorf("owner references %+v", pod.OwnerReferences)
	}
	if pod.Labels["nodewright.nvidia.com/nodewright"] != "demo" || pod.Labels["nodewright.nvidia.com/name"] != "demo" ||
		pod.Labels[SkyhookLabel] != "" || pod.Labels[NameLabel] != "" || pod.Labels[StageLabel] != "apply" || PackageOf(pod) != "tuning" ||
		pod.Labels["nodewright.nvidia.com/package"] != "tuning-"+s.Version || pod.Labels["nodewright.nvidia.com/node"] != s.Node {
		t.Errorf("labels %v", pod.Labels)
	}
	if Adopt(pod, twin) {
		t.Error("adopted twice")
	}
}

// Stage pods carry NodeWright's labels under their kind's prefix, with
// NodeWright's values, so that its users' selectors find them: name,
// package as <package>-<version>, stage, node, and interrupt "True" on an
// interrupt's pod. The package's bare name stays this operator's.
func TestStagePodsCarryNodeWrightsLabels(t *testing.T) {
	for _, kind := range skyhookv1.RolloutKinds {
		s := spec()
		s.Skyhook = s.Skyhook.DeepCopy()
		s.Skyhook.TypeMeta = metav1.TypeMeta{APIVersion: kind.GroupVersionKind.GroupVersion().String(), Kind: kind.Kind}
		pod := Build(s)
		p := kind.Prefix + "/"
		if pod.Labels[p+"name"] != "demo" || pod.Labels[p+"package"] != "tuning-"+s.Version || pod.Labels[p+"stage"] != "apply" ||
			pod.Labels[p+"node"] != s.Node || pod.Labels[p+"interrupt"] != "" || PackageOf(pod) != "tuning" {
			t.Errorf("%s: labels %v", kind.Kind, pod.Labels)
		}
		s.Stage = skyhookv1.StageInterrupt
		s.Interrupt = &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot}
		if pod := Build(s); pod.Labels[p+"interrupt"] != "True" || pod.Labels[p+"stage"] != "interrupt" {
			t.Errorf("%s interrupt: labels %v", kind.Kind, pod.Labels)
		}
	}
	// A pod of this operator's earlier releases kept the bare name under
	// the package label.
	old := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Labels: map[string]string{PackageLabel: "tuning"}}}
	if PackageOf(old) != "tuning" {
		t.Errorf("PackageOf an earlier release's pod: %q", PackageOf(old))
	}
}

// LabelValue keeps a valid value and makes any other one valid and unique:
// a node name longer than 63 characters, a version with build metadata.
func TestLabelValue(t *testing.T) {
	if got := LabelValue("tuning-1.0.0"); got != "tuning-1.0.0" {
		t.Errorf("a valid value changed: %q", got)
	}
	long := strings.Repeat("node-", 20) + "a"
	for _, v := range []string{long, strings.Repeat("node-", 20) + "b", "tuning-1.0.0+build.7", "tuning-1.0.0+build.8"} {
		got := LabelValue(v)
		if errs := validation.IsValidLabelValue(got); len(errs) > 0 {
			t.Errorf("LabelValue(%q) = %q: %v", v, got, errs)
		}
	}
	if LabelValue(long) == LabelValue(strings.Repeat("node-", 20)+"b") || LabelValue("tuning-1.0.0+build.7") == LabelValue("tuning-1.0.0+build.8") {
		t.Error("two values share a label value")
	}
}
