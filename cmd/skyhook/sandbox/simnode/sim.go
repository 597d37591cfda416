// Package simnode is the local cluster's simulated nodes: the stages KWOK
// plays for them (the simulation contract below, stages/*.yaml), the Node
// objects a test creates and waiting until they are Ready, reboots, and the
// HostSimulator that plays a host's part in an interrupt. A Fleet reaches
// the nodes of one cluster; package cluster starts KWOK and makes one.
package simnode

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/dynamic"
)

// The simulation contract. KWOK plays kubelet for every simulated node with
// the stages in stages/*.yaml; these are the knobs a test (or a package's
// env in a Skyhook) turns:
//
// Nodes
//   - BootIDAnnotation on a new node sets the bootID it boots with;
//     KubeletVersionAnnotation and ContainerRuntimeAnnotation the
//     kubelet and runtime it reports (DefaultKubeletVersion and
//     DefaultContainerRuntime: a kubelet and runtime that mount image
//     volumes; the simulator plays such a volume as mounted).
//   - RebootAnnotation set to a new bootID reboots the node: it goes
//     NotReady, and after RebootDurationAnnotation (default 2s) comes back
//     Ready with that bootID; the annotations are then removed.
//     Fleet.Reboot does this.
//
// Pods (only pods bound to a node with spec.nodeName run; there is no
// scheduler)
//   - A pod without init containers starts Running and Ready at once.
//   - A pod with init containers runs them one at a time, as a kubelet
//     does: the running one ends after its own time, then the next starts.
//     A container's time is its DurationEnv (a Go duration), or else a
//     tenth of its AgentlessSleepEnv seconds, or else 200ms; a stage's
//     check (a name ending in "check") and a package copy ("copy", or a
//     name ending in "-init") take none unless they carry
//     AgentlessSleepEnv, so a pod that holds N stages takes N stage times.
//     Each container exits with its ExitCodeEnv (default 0; when
//     ExitNodesEnv lists nodes, comma separated, the code applies only
//     on those and elsewhere it is 0; when ExitContainersEnv lists
//     container names, only in those); the first non-zero code stops the
//     pod: phase Failed with restartPolicy Never, otherwise Pending with
//     that container in CrashLoopBackOff and the code in lastState.
//   - NodeWright's test image (its "agentless" package: sleep SLEEP_LEN
//     seconds, exit EXIT_CODE) is played too, so its e2e manifests run
//     unchanged: a container's AgentlessExitCodeEnv is its exit code
//     unless ExitCodeEnv is set, and AgentlessSleepEnv its time as
//     above.
//   - An image whose registry host is under the reserved .invalid domain
//     (InvalidRegistry) cannot be pulled: that container waits in
//     ErrImagePull.
//   - A running pod whose only container is named "done" (NodeWright's
//     stage Job pods) succeeds: its Job completes.
//   - A deleted pod goes away once it has no finalizers, after
//     ShutdownDurationAnnotation (default immediately), removed with its
//     UID as a precondition (FinishDeletes, not a KWOK stage).
const (
	BootIDAnnotation           = "sim.skyhook.dev/boot-id"
	KubeletVersionAnnotation   = "sim.skyhook.dev/kubelet-version"
	ContainerRuntimeAnnotation = "sim.skyhook.dev/container-runtime"
	DefaultKubeletVersion      = "v1.36.0"
	DefaultContainerRuntime    = "containerd://2.2.0"
	RebootAnnotation           = "sim.skyhook.dev/reboot"
	RebootDurationAnnotation   = "sim.skyhook.dev/reboot-duration"
	ShutdownDurationAnnotation = "sim.skyhook.dev/shutdown-duration"
	DurationEnv                = "SKYHOOK_SIM_DURATION"
	ExitCodeEnv                = "SKYHOOK_SIM_EXIT_CODE"
	ExitNodesEnv               = "SKYHOOK_SIM_EXIT_NODES"
	ExitContainersEnv          = "SKYHOOK_SIM_EXIT_CONTAINERS"
	AgentlessExitCodeEnv       = "EXIT_CODE"
	AgentlessSleepEnv          = "SLEEP_LEN"
	InvalidRegistry            = "pull-error.invalid"
)

//go:embed stages/*.yaml
var stageFiles embed.FS

// defaultStages are the stages every cluster starts with (see Stages).
var defaultStages = mustReadStages("stages/node.yaml", "stages/pod.yaml")

// Stages are the stages KWOK plays for the simulated nodes and their pods.
// A heartbeat above zero slows each node's heartbeat to come after between
// 1 and 1.5 times it; zero keeps the stages' own, every 20–30 s.
func Stages(heartbeat time.Duration) []*unstructured.Unstructured {
	if heartbeat <= 0 {
		return defaultStages
	}
	out := make([]*unstructured.Unstructured, len(defaultStages))
	for i, st := range defaultStages {
		out[i] = st.DeepCopy()
		if st.GetName() != "skyhook-sim-node-heartbeat" {
			continue
		}
		ms := heartbeat.Milliseconds()
		delay := map[string]any{"durationMilliseconds": ms, "jitterDurationMilliseconds": ms * 3 / 2}
		if err := unstructured.SetNestedMap(out[i].Object, delay, "spec", "delay"); err != nil {
			panic(err)
		}
	}
	return out
}

var stageGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "stages"}

func mustReadStages(files ...string) []*unstructured.Unstructured {
	var stages []*unstructured.Unstructured
	for _, f := range files {
		data, err := stageFiles.ReadFile(f)
		if err != nil {
			panic(err)
		}
		objs, err := DecodeManifests(data)
		if err != nil {
			panic(fmt.Sprintf("%s: %v", f, err))
		}
		stages = append(stages, objs...)
	}
	return stages
}

// DecodeManifests splits a multi-document YAML stream into objects.
func DecodeManifests(data []byte) ([]*unstructured.Unstructured, error) {
	var objs []*unstructured.Unstructured
	dec := utilyaml.NewYAMLOrJSONDecoder(bytes.NewReader(data), 4096)
	for {
		u := &unstructured.Unstructured{}
		if err := dec.Decode(&u.Object); err != nil {
			if errors.Is(err, io.EOF) {
				return objs, nil
			}
			return nil, err
		}
		if len(u.Object) > 0 {
			objs = append(objs, u)
		}
	}
}

// ApplyStages creates or updates KWOK Stage objects (server-side apply). KWOK
// picks them up at once, so a test can add behaviour while the cluster runs;
// its selectors must not overlap the default stages'.
func (f *Fleet) ApplyStages(ctx context.Context, stages []*unstructured.Unstructured) error {
	dyn, err := dynamic.NewForConfig(f.Config)
	if err != nil {
		return err
	}
	for _, s := range stages {
		_, err := dyn.Resource(stageGVR).Apply(ctx, s.GetName(), s, metav1.ApplyOptions{FieldManager: "skyhook-sim", Force: true})
		if err != nil {
			return fmt.Errorf("applying stage %s: %w", s.GetName(), err)
		}
	}
	return nil
}

// Reboot reboots a simulated node: NotReady, then Ready again with newBootID
// after the given downtime (2s when zero). It returns at once; use
// WaitBootID to wait for the node to come back.
func (f *Fleet) Reboot(ctx context.Context, node, newBootID string, downtime time.Duration) error {
	annotations := map[string]any{RebootAnnotation: newBootID}
	if downtime > 0 {
		annotations[RebootDurationAnnotation] = downtime.String()
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": annotations}})
	if err != nil {
		return err
	}
	_, err = f.Clientset.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, patch, metav1.PatchOptions{})
	return err
}

// WaitBootID waits until the node is Ready with the given bootID.
func (f *Fleet) WaitBootID(ctx context.Context, node, bootID string, timeout time.Duration) error {
	return wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		n, err := f.Clientset.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if err != nil {
			return false, nil
		}
		return n.Status.NodeInfo.BootID == bootID && readyCondition(n) == corev1.ConditionTrue, nil
	})
}

// readyCondition is the status of the node's Ready condition.
func readyCondition(n *corev1.Node) corev1.ConditionStatus {
	for _, cond := range n.Status.Conditions {
		if cond.Type == corev1.NodeReady {
			return cond.Status
		}
	}
	return corev1.ConditionUnknown
}
