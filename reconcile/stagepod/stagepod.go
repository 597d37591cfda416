// Package stagepod builds the pod that runs one stage of one package on one
// node, and reads how it went.
//
// The pod runs in the operator's namespace with spec.nodeName set (no
// scheduler involved), privileged, in the host PID namespace, with the host
// root at /root. Its init containers run in order (named as NodeWright
// names them, see CopyContainer): the package image copies /skyhook-package
// to a per-(skyhook, package, version, generation) directory on the host;
// the agent runs the stage; the agent runs the stage's check. A pause container keeps the pod (and its logs) around until
// the operator has recorded the outcome.
package stagepod

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/klog/v2"

	"github.com/skyhook-go/skyhook/api/imageref"
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

// DefinitionHash identifies what a stage pod runs of a package's
// definition: its image (and digest), env, resources and agent image. A
// pod whose hash the spec no longer gives runs an outdated definition and
// is replaced, as NodeWright replaces such pods. The configMap is left out:
// a change there reruns the config stage instead.
func DefinitionHash(def skyhookv1.Package) string {
	encoded, _ := json.Marshal(struct { // plain data: cannot fail
		Image, ContainerSHA, AgentImage string
		Env                             []corev1.EnvVar
		Resources                       *skyhookv1.ResourceRequirements
	}{def.Image, def.ContainerSHA, def.AgentImageOverride, def.Env, def.Resources})
	sum := sha256.Sum256(encoded)
	return hex.EncodeToString(sum[:8])
}

// ConfigHash identifies a package's configMap content key by key: "key=h"
// for each key in order, comma separated, h a short hash of the key's
// content (ConfigMap keys cannot hold '=' or ','). Equal maps, equal
// strings; the empty map gives "". ChangedKeys tells which keys differ
// between two of them, for configInterrupts.
func ConfigHash(configMap map[string]string) string {
	keys := make([]string, 0, len(configMap))
	for k := range configMap {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		sum := sha256.Sum256([]byte(configMap[k]))
		parts[i] = k + "=" + hex.EncodeToString(sum[:6])
	}
	return strings.Join(parts, ",")
}

// ChangedKeys are the keys added, removed or changed from one ConfigHash
// to another, sorted. A hash it cannot read (an older format) counts every
// key of the other as changed.
func ChangedKeys(from, to string) []string {
	parse := func(h string) map[string]string {
		out := map[string]string{}
		for _, part := range strings.Split(h, ",") {
			if k, v, ok := strings.Cut(part, "="); ok {
				out[k] = v
			}
		}
		return out
	}
	a, b := parse(from), parse(to)
	var changed []string
	for k, v := range b {
		if a[k] != v {
			changed = append(changed, k)
		}
	}
	for k := range a {
		if _, ok := b[k]; !ok {
			changed = append(changed, k)
		}
	}
	sort.Strings(changed)
	return changed
}

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
	// Then are the stages the pod runs after Stage, in order, with no
	// interrupt between them (a run: an install's config after its apply
	// or upgrade). Each has its own containers and its own Timeout; the
	// pod's deadline is their sum.
	Then []skyhookv1.Stage
	// Next are the packages the pod runs after this one, in order, each
	// with its own stages (a run of several packages, see Parts): each is
	// a whole Spec of its package, of which the pod takes the package's
	// fields (package, definition, version, image, stages, attempt,
	// configMap, timeout).
	Next []Spec
}

// parts are the specs of the pod's packages, in order.
func (s Spec) parts() []Spec {
	return append([]Spec{s}, s.Next...)
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

// OwnerLabel labels the stage pods of the kind's rollouts with the
// rollout's name.
func OwnerLabel(kind skyhookv1.RolloutKind) string { return kind.OwnerLabel() }

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

// labels are the pod's labels: the owner's, this operator's bookkeeping,
// and NodeWright's under the kind's prefix.
func (s Spec) labels(kind skyhookv1.RolloutKind) map[string]string {
	labels := map[string]string{kind.OwnerLabel(): s.Skyhook.Name, PackageNameLabel: s.Package, StageLabel: string(s.Stage)}
	maps.Copy(labels, s.nodeWrightLabels(kind))
	return labels
}

// nodeWrightLabels are the labels NodeWright puts on its stage pods, under
// the kind's prefix: name, package (<package>-<version>), stage, node, and
// interrupt "True" on an interrupt's pod.
func (s Spec) nodeWrightLabels(kind skyhookv1.RolloutKind) map[string]string {
	labels := map[string]string{
		kind.Prefix + "/name":    s.Skyhook.Name,
		kind.Prefix + "/package": LabelValue(s.Package + "-" + s.Version),
		kind.Prefix + "/stage":   string(s.Stage),
		kind.Prefix + "/node":    LabelValue(s.Node),
	}
	if agentMode(s.Stage) == string(skyhookv1.StageInterrupt) {
		labels[kind.Prefix+"/interrupt"] = "True"
	}
	return labels
}

// LabelValue is v when it is a valid label value; otherwise (longer than
// 63 characters, as a node name may be, or holding a character a label
// value cannot, as a version's '+' build metadata) its valid characters
// cut to 54 and a hash of v, so two values never share one.
func LabelValue(v string) string {
	if len(validation.IsValidLabelValue(v)) == 0 {
		return v
	}
	clean := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || (r >= 'a' && r <= 'z') || (r >= 'A' && r <= 'Z') || (r >= '0' && r <= '9') {
			return r
		}
		return '-'
	}, v)
	if len(clean) > 54 {
		clean = clean[:54]
	}
	sum := sha256.Sum256([]byte(v))
	return strings.Trim(clean, "-_.") + "-" + hex.EncodeToString(sum[:4])
}

// PackageOf is the name of the package the stage pod runs: its
// PackageNameLabel, or on a pod of this operator's releases before that
// label, the bare name they kept in PackageLabel.
func PackageOf(pod *corev1.Pod) string {
	if name, ok := pod.Labels[PackageNameLabel]; ok {
		return name
	}
	return pod.Labels[PackageLabel]
}

// CopyDir is the package's directory on the host, relative to the host root.
func (s Spec) CopyDir() string {
	return path.Join("/var/lib/skyhook", s.Skyhook.Name, s.Package, s.Version, strconv.FormatInt(s.Skyhook.Generation, 10))
}

// agentMode is the agent's mode for a stage: the stage's name, except that
// the interrupt after an uninstall is an interrupt like any other.
func agentMode(stage skyhookv1.Stage) string {
	if stage == skyhookv1.StageUninstallInterrupt {
		return string(skyhookv1.StageInterrupt)
	}
	return string(stage)
}

// The init containers are named as NodeWright names them, so that its
// users' `kubectl logs -c` and selectors find them, and so that the names
// stay unique in a pod that holds several packages' stages: the package's
// name (cut to 43 characters, as NodeWright cuts it; admission allows no
// longer) then "-init" for the copy, "-<stage>" for the stage and
// "-<stage>check" for its check. An interrupt's container is named for its
// stage alone ("interrupt", NodeWright's name, or "uninstall-interrupt"):
// one interrupt serves every package due on the node.

// CopyContainer is the name of the container that copies the package.
func CopyContainer(pkg string) string { return containerPrefix(pkg) + "-init" }

// StageContainer is the name of the container that runs the stage.
func StageContainer(pkg string, stage skyhookv1.Stage) string {
	if agentMode(stage) == string(skyhookv1.StageInterrupt) {
		return string(stage)
	}
	return containerPrefix(pkg) + "-" + string(stage)
}

// CheckContainer is the name of the container that runs the stage's check.
func CheckContainer(pkg string, stage skyhookv1.Stage) string {
	return containerPrefix(pkg) + "-" + string(stage) + "check"
}

func containerPrefix(pkg string) string {
	if len(pkg) > 43 {
		return pkg[:43]
	}
	return pkg
}

// containers are the init containers of the spec's package: the copy,
// then each stage and its check; configVolume names the volume of its
// configMap.
func (s Spec) containers(configVolume string) []corev1.Container {
	pkg := s.Definition
	agent := s.AgentImage
	if pkg.AgentImageOverride != "" {
		agent = pkg.AgentImageOverride
	}
	privileged := true
	copyDir := path.Join(HostRoot, s.CopyDir())
	agentContainer := func(name, mode string, stage skyhookv1.Stage) corev1.Container {
		args := []string{mode, HostRoot, copyDir}
		if s.Interrupt != nil && mode == string(skyhookv1.StageInterrupt) {
			spec, _ := json.Marshal(s.Interrupt) // a struct of strings always encodes
			args = append(args, string(spec))
		}
		return corev1.Container{
			Name:            name,
			Image:           agent,
			Args:            args,
			Env:             append(stageEnv(s, stage), pkg.Env...),
			Resources:       resources(pkg.Resources),
			SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
			VolumeMounts:    mounts(s, configVolume),
		}
	}
	init := []corev1.Container{
		{
			Name:            CopyContainer(s.Package),
			Image:           packageImage(s.Image, s.Version, pkg.ContainerSHA),
			Command:         []string{"/bin/sh", "-c", fmt.Sprintf("mkdir -p %[1]s && cp -r /skyhook-package/. %[1]s/", copyDir)},
			SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
			VolumeMounts:    []corev1.VolumeMount{{Name: "host-root", MountPath: HostRoot}},
		},
	}
	for _, stage := range s.Stages() {
		init = append(init, agentContainer(StageContainer(s.Package, stage), agentMode(stage), stage))
		if agentMode(stage) != string(skyhookv1.StageInterrupt) { // every other mode has a check
			init = append(init, agentContainer(CheckContainer(s.Package, stage), string(stage)+"-check", stage))
		}
	}
	return init
}

// Build makes the pod: the spec's containers, then those of each package
// of Next (a run of several packages), in order.
func Build(s Spec) *corev1.Pod {
	init := s.containers(configVolume(0))
	for i, next := range s.Next {
		init = append(init, next.containers(configVolume(i+1))...)
	}
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
			InitContainers:                init,
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

// deadline is the sum of the deadlines of the pod's packages, nil when
// one has none (the operator then times each package's stages itself).
func (s Spec) deadline() *int64 {
	var sum int64
	for _, part := range s.parts() {
		d := deadline(part.Timeout, len(part.Stages()))
		if d == nil {
			return nil
		}
		sum = min(sum+*d, math.MaxInt32)
	}
	return &sum
}

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
	if len(s.Next) > 0 {
		a[RunPackagesAnnotation] = encodeParts(s.parts())
	}
	return a
}

func stageEnv(s Spec, stage skyhookv1.Stage) []corev1.EnvVar {
	return []corev1.EnvVar{
		{Name: "SKYHOOK_NAME", Value: s.Skyhook.Name},
		{Name: "SKYHOOK_PACKAGE", Value: s.Package},
		{Name: "SKYHOOK_VERSION", Value: s.Version},
		{Name: "SKYHOOK_STAGE", Value: string(stage)},
		{Name: "SKYHOOK_GENERATION", Value: strconv.FormatInt(s.Skyhook.Generation, 10)},
		{Name: "SKYHOOK_NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "SKYHOOK_NODE_ORDER", Value: strconv.Itoa(s.NodeOrder)},
	}
}

// packageImage pins the image to the version as tag, unless it already
// carries a digest (the mutating webhook moved any matching tag out).
func packageImage(image, version, containerSHA string) string {
	ref, err := imageref.Parse(image)
	if err != nil {
		return image + ":" + version // admission refuses such images; the kubelet reports it
	}
	switch {
	case ref.Digest != "":
		return ref.Repository + "@" + ref.Digest
	case containerSHA != "":
		return ref.Repository + "@sha256:" + strings.TrimPrefix(containerSHA, "sha256:")
	}
	return ref.Repository + ":" + version // a tag written in the image never wins over the version
}

func mounts(s Spec, configVolume string) []corev1.VolumeMount {
	m := []corev1.VolumeMount{{Name: "host-root", MountPath: HostRoot}, {Name: "node-metadata", MountPath: NodeMetadataDir, ReadOnly: true}}
	if s.ConfigMap != "" {
		m = append(m, corev1.VolumeMount{Name: configVolume, MountPath: "/skyhook-package/configmaps", ReadOnly: true})
	}
	return m
}

func volumes(s Spec) []corev1.Volume {
	v := []corev1.Volume{{Name: "host-root", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/"}}}, metadataVolume()}
	for i, part := range s.parts() {
		if part.ConfigMap == "" {
			continue
		}
		v = append(v, corev1.Volume{Name: configVolume(i), VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
			LocalObjectReference: corev1.LocalObjectReference{Name: part.ConfigMap},
		}}})
	}
	return v
}

// configVolume names the volume of the configMap of a pod's i-th package:
// "configmap" for the first (as a pod of one package has it), then
// "configmap-1"...
func configVolume(i int) string {
	if i == 0 {
		return "configmap"
	}
	return "configmap-" + strconv.Itoa(i)
}

// DefaultRuntimeRequiredTaint is the runtime-required taint of Skyhooks
// unless the operator is told another:
// skyhook.nvidia.com=runtime-required:NoSchedule.
var DefaultRuntimeRequiredTaint = skyhookv1.Skyhooks.RuntimeRequiredTaint()

// DefaultRuntimeRequiredTaints are the default runtime-required taints of
// every kind: the ones stage pods tolerate and a node done is freed of,
// whichever kind put them there.
func DefaultRuntimeRequiredTaints() []corev1.Taint {
	out := make([]corev1.Taint, len(skyhookv1.RolloutKinds))
	for i, k := range skyhookv1.RolloutKinds {
		out[i] = k.RuntimeRequiredTaint()
	}
	return out
}

// Tolerations let the stage pod onto the nodes the Skyhook works on: its
// own additional tolerations, the runtime-required taints (every
// rollout's pods tolerate them, see reconcile.RuntimeRequired), and a
// cordon (interrupts run on cordoned nodes).
func Tolerations(sk *skyhookv1.Skyhook, runtimeRequired []corev1.Taint) []corev1.Toleration {
	var t []corev1.Toleration
	for _, taint := range runtimeRequired {
		tol := corev1.Toleration{Key: taint.Key, Value: taint.Value, Effect: taint.Effect}
		if taint.Value == "" {
			tol.Operator = corev1.TolerationOpExists
		}
		t = append(t, tol)
	}
	t = append(t, corev1.Toleration{Key: corev1.TaintNodeUnschedulable, Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule})
	return append(t, sk.Spec.AdditionalTolerations...)
}

func resources(r *skyhookv1.ResourceRequirements) corev1.ResourceRequirements {
	// Admission lets through all four or none.
	if r == nil || r.CPURequest == nil || r.CPULimit == nil || r.MemoryRequest == nil || r.MemoryLimit == nil {
		return corev1.ResourceRequirements{}
	}
	return corev1.ResourceRequirements{
		Requests: corev1.ResourceList{corev1.ResourceCPU: *r.CPURequest, corev1.ResourceMemory: *r.MemoryRequest},
		Limits:   corev1.ResourceList{corev1.ResourceCPU: *r.CPULimit, corev1.ResourceMemory: *r.MemoryLimit},
	}
}

// gracePeriod is the longest gracefulShutdown of the pod's packages (nil:
// none sets one).
func (s Spec) gracePeriod() *int64 {
	var out *int64
	for _, part := range s.parts() {
		if g := part.Definition.GracefulShutdown; g != nil && (out == nil || int64(g.Seconds()) > *out) {
			seconds := int64(g.Seconds())
			out = &seconds
		}
	}
	return out
}

// Untolerated returns the node's NoSchedule and NoExecute taints that the
// Skyhook's stage pods do not tolerate. With spec.nodeName set no scheduler
// would stop the pod, so the operator must not place it there.
func Untolerated(sk *skyhookv1.Skyhook, node *corev1.Node, runtimeRequired []corev1.Taint) []corev1.Taint {
	tolerations := Tolerations(sk, runtimeRequired)
	var out []corev1.Taint
	for i := range node.Spec.Taints {
		taint := &node.Spec.Taints[i]
		if taint.Effect == corev1.TaintEffectPreferNoSchedule {
			continue
		}
		tolerated := false
		for j := range tolerations {
			if tolerations[j].ToleratesTaint(klog.Background(), taint, false) {
				tolerated = true
				break
			}
		}
		if !tolerated {
			out = append(out, *taint)
		}
	}
	return out
}

// Adopt makes a stage pod of to's twin (the same rollout under the other
// kind) to's own, in place: its owner labels and controller reference name
// to, so that to's passes find it and read its outcome, and the pod is not
// garbage collected when the twin is deleted mid-stage. It reports whether
// it changed the pod.
func Adopt(pod *corev1.Pod, to *skyhookv1.Skyhook) bool {
	kind := skyhookv1.KindOf(to)
	owner := metav1.NewControllerRef(to, kind.GroupVersionKind)
	if current := metav1.GetControllerOf(pod); current != nil && current.UID == owner.UID {
		return false
	}
	for _, other := range skyhookv1.RolloutKinds {
		delete(pod.Labels, other.OwnerLabel())
		delete(pod.Labels, other.Prefix+"/name")
	}
	pod.Labels[kind.OwnerLabel()] = to.Name
	pod.Labels[kind.Prefix+"/name"] = to.Name
	// NodeWright's labels under the new kind's prefix too; the old kind's
	// stay (a Skyhook's are this operator's bookkeeping keys as well).
	if pkg := PackageOf(pod); pkg != "" {
		pod.Labels[PackageNameLabel] = pkg
		was := Spec{Skyhook: to, Package: pkg, Version: pod.Annotations[VersionAnnotation], Stage: skyhookv1.Stage(pod.Labels[StageLabel]), Node: pod.Spec.NodeName}
		maps.Copy(pod.Labels, was.nodeWrightLabels(kind))
	}
	pod.OwnerReferences = []metav1.OwnerReference{*owner}
	return true
}
