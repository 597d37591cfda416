// Package stagepod builds the pod that runs one stage of one package on one
// node, and reads how it went.
//
// The pod runs in the operator's namespace with spec.nodeName set (no
// scheduler involved), privileged, in the host PID namespace, with the host
// root at /root. Its init containers run in order (named as NodeWright
// names them, see CopyContainer): the package image copies /skyhook-package
// to a per-(skyhook, package, version, generation) directory on the host,
// unless the pod mounts the package image as an image volume (then the
// agent copies it, Spec.ImageVolume); the agent runs the stage and its
// check, in one container or two (Shape). A pause container keeps the pod
// (and its logs) around until the operator has recorded the outcome.
package stagepod

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Labels and annotations of stage pods. A pod's rollout is named by its
// kind's owner label (SkyhookLabel for a Skyhook's,
// nodewright.nvidia.com/nodewright for a NodeWright's: OwnerLabel). Under
// the kind's prefix it also carries NodeWright's labels with NodeWright's
// values (name, package as <package>-<version>, stage, node, interrupt:
// "True"; see nodeWrightLabels), so that the selectors of its users'
// runbooks find the pods. PackageNameLabel, StageLabel and the annotations
// are this operator's bookkeeping, the same for every kind.
const (
	SkyhookLabel = skyhookv1.MetadataPrefix + "/skyhook"
	// PackageLabel is NodeWright's package label of a Skyhook's stage pods:
	// <package>-<version>. (This operator's releases before it held the
	// bare name there: see PackageOf.)
	PackageLabel = skyhookv1.MetadataPrefix + "/package"
	// PackageNameLabel is the package's name, what the operator files a
	// stage pod under.
	PackageNameLabel = skyhookv1.MetadataPrefix + "/package-name"
	StageLabel       = skyhookv1.MetadataPrefix + "/stage"
	// NameLabel is the Skyhook's name under the key NodeWright labels its
	// stage pods with, so that selectors written for it find these.
	NameLabel            = skyhookv1.MetadataPrefix + "/name"
	VersionAnnotation    = skyhookv1.MetadataPrefix + "/version"
	GenerationAnnotation = skyhookv1.MetadataPrefix + "/generation"
	AttemptAnnotation    = skyhookv1.MetadataPrefix + "/attempt"
	// ConfigHashAnnotation is the hash of the package configMap the pod
	// mounts (see ConfigHash).
	ConfigHashAnnotation = skyhookv1.MetadataPrefix + "/config-hash"
	// DefinitionAnnotation is the hash of what the pod runs of its
	// package's definition (see DefinitionHash).
	DefinitionAnnotation = skyhookv1.MetadataPrefix + "/definition-hash"
	// StagesAnnotation lists, comma separated and in order, the stages of
	// a pod that runs more than one (a run, see Spec.Stages); a pod
	// without it runs the stage of its StageLabel.
	StagesAnnotation = skyhookv1.MetadataPrefix + "/stages"
	// ConfigInterruptAnnotation is, on a config stage pod run for a
	// changed configMap, the interrupt decided for after it (see
	// Spec.ConfigInterrupt).
	ConfigInterruptAnnotation = skyhookv1.MetadataPrefix + "/config-interrupt"
)

// HostRoot is where the host's root is mounted in the stage containers.
const HostRoot = "/root"

// Spec is what a stage pod is made from.
type Spec struct {
	Skyhook *skyhookv1.Skyhook
	Package string
	// Definition is the package as declared for Version: the spec's for
	// the declared version, a snapshot's for an older one being
	// uninstalled. Its env, resources, agentImageOverride and
	// gracefulShutdown apply.
	Definition skyhookv1.Package
	Version    string
	Image      string // the package image (repository, or repository@digest)
	Stage      skyhookv1.Stage
	Node       string
	Namespace  string
	AgentImage string // operator-wide; a package's agentImageOverride wins
	PauseImage string
	// ImagePullSecrets name Secrets in Namespace for pulling the package,
	// agent and pause images (a private registry such as nvcr.io).
	ImagePullSecrets []string
	// Attempt numbers the tries of this stage, so a retry is a new pod.
	Attempt int32
	// RuntimeRequiredTaints are the runtime-required taints the operator
	// recognises (of every kind), which stage pods tolerate.
	RuntimeRequiredTaints []corev1.Taint
	// Interrupt is the node's merged interrupt, for the interrupt stage: the
	// agent gets it as JSON after the copy directory.
	Interrupt *skyhookv1.Interrupt
	// ConfigMap is the name of the ConfigMap holding the Definition's
	// configMap, empty when it has none.
	ConfigMap string
	// Timeout bounds the pod's run: the kubelet stops it past that
	// (activeDeadlineSeconds). Zero sets no deadline.
	Timeout time.Duration
	// NodeLabels and NodeAnnotations are the node's, for the steps'
	// node-metadata files (see metadata.go).
	NodeLabels, NodeAnnotations map[string]string
	// NodeOrder is the node's place in the rollout, 0 for the first node
	// (SKYHOOK_NODE_ORDER, as NodeWright gives it to the steps).
	NodeOrder int
	// ConfigInterrupt is, for a config stage run for a changed configMap,
	// the interrupt decided for after it as the node's record keeps it
	// (the interrupt as JSON, "" for none), nil for any other stage pod.
	// The pod carries it so that the decision, made once as the stage
	// starts, survives a record write that did not land (the operator
	// stopped) or one a pass reading an older record replaced.
	ConfigInterrupt *string
	// Shape lays the stages out in containers; empty is Compact.
	Shape Shape
	// ImageVolume mounts the package image in the stage containers as an
	// image volume, and the agent copies the package to the host from
	// there: the pod has no copy container. The operator sets it where
	// the apiserver and the node's kubelet and runtime support image
	// volumes (reconcile/imagevolume); the NodeWright shape keeps its copy
	// container (<pkg>-init) whatever it says.
	ImageVolume bool
	// Then are the stages the pod runs after Stage, in order, with no
	// interrupt between them (a run: an install's config after its apply
	// or upgrade). Each has its own containers and its own Timeout; the
	// pod's deadline is their sum.
	Then []skyhookv1.Stage
}

// Stages are the stages the spec's pod runs, in order.
func (s Spec) Stages() []skyhookv1.Stage {
	return append([]skyhookv1.Stage{s.Stage}, s.Then...)
}

// Stages are the stages a stage pod runs, in order: those of its
// StagesAnnotation, else the one of its StageLabel.
func Stages(pod *corev1.Pod) []skyhookv1.Stage {
	list, ok := pod.Annotations[StagesAnnotation]
	if !ok {
		return []skyhookv1.Stage{skyhookv1.Stage(pod.Labels[StageLabel])}
	}
	var out []skyhookv1.Stage
	for _, stage := range strings.Split(list, ",") {
		out = append(out, skyhookv1.Stage(stage))
	}
	return out
}

// Name is the pod's name: readable, unique per (rollout, package, version,
// stage, node, generation, attempt), within 63 characters. A NodeWright's
// hash also takes its kind, so a Skyhook of the same name has pods of its
// own.
func (s Spec) Name() string {
	owner := s.Skyhook.Name
	if kind := skyhookv1.KindOf(s.Skyhook); kind != skyhookv1.Skyhooks {
		owner = kind.Kind + "/" + owner
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s/%s/%s/%s/%s/%d/%d", owner, s.Package, s.Version, s.Stage, s.Node, s.Skyhook.Generation, s.Attempt))
	prefix := fmt.Sprintf("%s-%s-%s", s.Skyhook.Name, s.Package, s.Stage)
	if len(prefix) > 52 {
		prefix = prefix[:52]
	}
	return strings.TrimRight(prefix, "-") + "-" + hex.EncodeToString(sum[:5])
}

// Build makes the pod of the spec's package and stages.
func Build(s Spec) *corev1.Pod {
	kind := skyhookv1.KindOf(s.Skyhook)
	owner := metav1.NewControllerRef(s.Skyhook, kind.GroupVersionKind)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:            s.Name(),
			Namespace:       s.Namespace,
			Labels:          s.labels(kind),
			Annotations:     annotations(s),
			OwnerReferences: []metav1.OwnerReference{*owner},
		},
		Spec: corev1.PodSpec{
			NodeName:      s.Node,
			RestartPolicy: corev1.RestartPolicyNever,
			// The host's PID and network namespaces, as upstream's stage
			// pods have: steps set per-namespace sysctls and reach host
			// services (a DNS stub on 127.0.0.53) as the host does.
			HostPID:                       true,
			HostNetwork:                   true,
			ImagePullSecrets:              pullSecrets(s.ImagePullSecrets),
			Tolerations:                   Tolerations(s.Skyhook, s.RuntimeRequiredTaints),
			InitContainers:                s.containers(),
			Containers:                    []corev1.Container{{Name: "pause", Image: s.PauseImage}},
			Volumes:                       volumes(s),
			TerminationGracePeriodSeconds: s.gracePeriod(),
			ActiveDeadlineSeconds:         s.deadline(),
		},
	}
}

func pullSecrets(names []string) []corev1.LocalObjectReference {
	var refs []corev1.LocalObjectReference
	for _, name := range names {
		refs = append(refs, corev1.LocalObjectReference{Name: name})
	}
	return refs
}

// deadline is the pod's: each stage's timeout times its stages, nil for
// none (the operator then times the stages itself).
func (s Spec) deadline() *int64 { return deadline(s.Timeout, len(s.Stages())) }

// deadline is the timeout of each of a pod's stages, times their number,
// in whole seconds (at least one), nil for none.
func deadline(timeout time.Duration, stages int) *int64 {
	if timeout <= 0 {
		return nil
	}
	// Rounded up and clamped, as NodeWright sets its Jobs' deadlines.
	seconds := min(int64((timeout+time.Second-1)/time.Second), math.MaxInt32)
	seconds = min(seconds*int64(stages), math.MaxInt32)
	return &seconds
}

func annotations(s Spec) map[string]string {
	a := metadataAnnotations(s)
	a[VersionAnnotation] = s.Version
	a[GenerationAnnotation] = strconv.FormatInt(s.Skyhook.Generation, 10)
	a[AttemptAnnotation] = strconv.Itoa(int(s.Attempt))
	a[ConfigHashAnnotation] = ConfigHash(s.Definition.ConfigMap)
	a[DefinitionAnnotation] = DefinitionHash(s.Definition)
	if s.ConfigInterrupt != nil {
		a[ConfigInterruptAnnotation] = *s.ConfigInterrupt
	}
	if len(s.Then) > 0 {
		var stages []string
		for _, stage := range s.Stages() {
			stages = append(stages, string(stage))
		}
		a[StagesAnnotation] = strings.Join(stages, ",")
	}
	return a
}

func volumes(s Spec) []corev1.Volume {
	v := []corev1.Volume{{Name: "host-root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}, metadataVolume()}
	if s.mountsPackage() {
		v = append(v, corev1.Volume{Name: packageVolume, VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{
			Reference: packageImage(s.Image, s.Version, s.Definition.ContainerSHA),
		}}})
	}
	if s.ConfigMap != "" {
		v = append(v, corev1.Volume{Name: configVolume, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: s.ConfigMap},
		}}})
	}
	return v
}

// The volumes of the package's image (where it is mounted) and of its
// configMap.
const (
	packageVolume = "package"
	configVolume  = "configmap"
)

// gracePeriod is the package's gracefulShutdown, nil for the kubelet's
// default.
func (s Spec) gracePeriod() *int64 {
	if g := s.Definition.GracefulShutdown; g != nil {
		seconds := int64(g.Seconds())
		return &seconds
	}
	return nil
}
