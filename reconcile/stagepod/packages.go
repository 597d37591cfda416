package stagepod

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// A pod of several packages, as operators with --package-runs made them
// until it was removed: packages due back to back on a node ran in one
// pod, each package's containers after the ones before. This operator
// makes none, but reads to their end the ones an earlier operator left
// running. The pod's labels and annotations are its first package's, as
// a pod of that package alone has them; RunPackagesAnnotation lists every
// package with what the operator reads of it. Views splits such a pod
// into one pod per package, each as a pod of that package alone would
// read, so that the rollout reads a package's stages the one way whatever
// pod holds them.

// RunPackagesAnnotation lists, as JSON, the packages of a pod that runs more
// than one (see Part), in the order they run.
const RunPackagesAnnotation = skyhookv1.MetadataPrefix + "/run-packages"

// Part is one package of a pod of several, as RunPackagesAnnotation lists it.
type Part struct {
	Package    string            `json:"package"`
	Version    string            `json:"version"`
	Stages     []skyhookv1.Stage `json:"stages"`
	Attempt    int32             `json:"attempt"`
	ConfigHash string            `json:"configHash"`
	Definition string            `json:"definition"`
	// TimeoutSeconds is each of its stages' timeout (0: none).
	TimeoutSeconds int64 `json:"timeoutSeconds,omitempty"`
}

// Parts are the packages of a pod of several, in order; nil for a pod of
// one package, or one whose list cannot be read or names a package
// without stages (it then reads as a pod of its first package).
func Parts(pod *corev1.Pod) []Part {
	encoded, ok := pod.Annotations[RunPackagesAnnotation]
	if !ok {
		return nil
	}
	var parts []Part
	if json.Unmarshal([]byte(encoded), &parts) != nil || len(parts) < 2 {
		return nil
	}
	for _, part := range parts {
		if part.Package == "" || len(part.Stages) == 0 {
			return nil // not a list this operator wrote
		}
	}
	return parts
}

// Views are the pod as each of its packages reads it: the pod itself for a
// pod of one package; for a pod of several, one view per package that
// can still run or has run (a later package that never started in a pod
// that ended never will: it has none). A view has the package's labels and
// annotations, its containers and their statuses alone, its own deadline,
// and for a later package its start as its creation and start time; a
// package whose containers all exited 0 reads Succeeded though a later
// one failed the pod. A view shares the pod's name and UID: it is deleted
// as the pod.
func Views(pod *corev1.Pod) []*corev1.Pod {
	parts := Parts(pod)
	if parts == nil {
		return []*corev1.Pod{pod}
	}
	views := make([]*corev1.Pod, 0, len(parts))
	for i, part := range parts {
		if v := view(pod, part, i > 0); v != nil {
			views = append(views, v)
		}
	}
	return views
}

// view is the pod as one of its packages reads it (see Views), nil for a
// later package that never started in a pod that ended.
func view(pod *corev1.Pod, part Part, later bool) *corev1.Pod {
	names := containerNames(part)
	v := &corev1.Pod{TypeMeta: pod.TypeMeta, ObjectMeta: pod.ObjectMeta, Spec: pod.Spec, Status: pod.Status}
	v.Labels, v.Annotations = partLabels(pod.Labels, part), partAnnotations(pod.Annotations, part, later)
	v.Spec.InitContainers = slices.DeleteFunc(slices.Clone(pod.Spec.InitContainers), func(c corev1.Container) bool { return !names[c.Name] })
	v.Status.InitContainerStatuses = slices.DeleteFunc(slices.Clone(pod.Status.InitContainerStatuses), func(s corev1.ContainerStatus) bool { return !names[s.Name] })
	ended := pod.Status.Phase == corev1.PodFailed || pod.Status.Phase == corev1.PodSucceeded
	start, started := StageStart(v, part.Stages[0]) // its copy container's start
	switch {
	case later && !started && ended:
		return nil
	case initContainersDone(v):
		v.Status.Phase = corev1.PodSucceeded
	}
	v.Spec.ActiveDeadlineSeconds = nil
	if part.TimeoutSeconds > 0 && (started || !later) {
		seconds := part.TimeoutSeconds * int64(len(part.Stages))
		v.Spec.ActiveDeadlineSeconds = &seconds
	}
	if later {
		// Its time counts from its own start: the packages before it are
		// not its to wait for.
		v.Status.StartTime = nil
		if started {
			v.CreationTimestamp, v.Status.StartTime = metav1.NewTime(start), &metav1.Time{Time: start}
		}
	}
	return v
}

// containerNames are the names of a package's containers in a pod.
func containerNames(part Part) map[string]bool {
	names := map[string]bool{CopyContainer(part.Package): true}
	for _, stage := range part.Stages {
		names[StageContainer(part.Package, stage)] = true
		names[CheckContainer(part.Package, stage)] = true
	}
	return names
}

// partLabels are the pod's labels with the package's in place of the
// first package's: this operator's and NodeWright's (under every kind's
// prefix the pod carries them).
func partLabels(labels map[string]string, part Part) map[string]string {
	out := maps.Clone(labels)
	out[PackageNameLabel], out[StageLabel] = part.Package, string(part.Stages[0])
	for _, kind := range skyhookv1.RolloutKinds {
		if _, ok := out[kind.Prefix+"/package"]; ok {
			out[kind.Prefix+"/package"] = LabelValue(part.Package + "-" + part.Version)
			out[kind.Prefix+"/stage"] = string(part.Stages[0])
		}
	}
	return out
}

// partAnnotations are the pod's annotations with the package's in place of
// the first package's.
func partAnnotations(annotations map[string]string, part Part, later bool) map[string]string {
	out := maps.Clone(annotations)
	out[VersionAnnotation], out[AttemptAnnotation] = part.Version, strconv.Itoa(int(part.Attempt))
	out[ConfigHashAnnotation], out[DefinitionAnnotation] = part.ConfigHash, part.Definition
	delete(out, StagesAnnotation)
	if len(part.Stages) > 1 {
		stages := make([]string, len(part.Stages))
		for i, s := range part.Stages {
			stages[i] = string(s)
		}
		out[StagesAnnotation] = strings.Join(stages, ",")
	}
	if later {
		delete(out, ConfigInterruptAnnotation) // a config rerun runs alone, first
	}
	return out
}
