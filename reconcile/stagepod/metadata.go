package stagepod

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"

	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/api/imageref"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Node metadata for the steps. A package's steps find the node's labels and
// annotations, and the Skyhook's packages, in
// node-metadata/{labels,annotations,packages}.json of the package copy
// (the reference system's contract). The operator snapshots them into the
// stage pod's annotations when it creates the pod, and a downward API
// volume turns those into files the agent copies next to the package: no
// extra object, and no extra API request, per stage.
const (
	NodeLabelsAnnotation      = skyhookv1.MetadataPrefix + "/node-labels"
	NodeAnnotationsAnnotation = skyhookv1.MetadataPrefix + "/node-annotations"
	PackagesAnnotation        = skyhookv1.MetadataPrefix + "/packages"

	// NodeMetadataDir is where the agent containers see the files.
	NodeMetadataDir = "/skyhook-package/node-metadata"
)

// Limits that keep the pod under the apiserver's 256 KiB for all of an
// object's annotations: a node annotation value over maxAnnotationValue is
// replaced by a note of its size, and annotations stop being added (in key
// order) past maxAnnotationsJSON.
const (
	maxAnnotationValue = 16 << 10
	maxAnnotationsJSON = 128 << 10
)

// packagesMetadata is packages.json: the Skyhook's packages as the agent
// may need them (field names of the reference system).
type packagesMetadata struct {
	AgentVersion string                     `json:"agentVersion"`
	Packages     map[string]packageMetadata `json:"packages"`
}

type packageMetadata struct {
	Name               string                         `json:"name"`
	Version            string                         `json:"version"`
	Image              string                         `json:"image"`
	AgentImageOverride string                         `json:"agentImageOverride,omitempty"`
	Interrupt          *skyhookv1.Interrupt           `json:"interrupt,omitempty"`
	ConfigInterrupts   map[string]skyhookv1.Interrupt `json:"configInterrupts,omitempty"`
}

// metadataAnnotations are the stage pod's snapshot of the node and the
// Skyhook's packages.
func metadataAnnotations(s Spec) map[string]string {
	labels, _ := json.Marshal(nonNil(s.NodeLabels)) // a map of strings always encodes
	agent, _ := imageref.Parse(s.AgentImage)        // the operator's flag; a bad one leaves the version empty
	pkgs := packagesMetadata{AgentVersion: agent.Tag, Packages: map[string]packageMetadata{}}
	for name, p := range s.Skyhook.Spec.Packages {
		pkgs.Packages[name] = packageMetadata{Name: name, Version: p.Version, Image: p.Image, AgentImageOverride: p.AgentImageOverride,
			Interrupt: p.Interrupt, ConfigInterrupts: p.ConfigInterrupts}
	}
	packages, _ := json.Marshal(pkgs) // strings, maps and structs of them always encode
	return map[string]string{
		NodeLabelsAnnotation:      string(labels),
		NodeAnnotationsAnnotation: boundedAnnotations(s.NodeAnnotations),
		PackagesAnnotation:        string(packages),
	}
}

// boundedAnnotations encodes the node's annotations within the limits
// above.
func boundedAnnotations(annotations map[string]string) string {
	kept := map[string]string{}
	size := 0
	for _, k := range slices.Sorted(maps.Keys(annotations)) {
		v := annotations[k]
		if len(v) > maxAnnotationValue {
			v = fmt.Sprintf("(omitted by Skyhook: %d bytes, over %d)", len(v), maxAnnotationValue)
		}
		if size += len(k) + len(v) + 6; size > maxAnnotationsJSON {
			kept[skyhookv1.MetadataPrefix+"/truncated"] = "node annotations past this size are omitted"
			break
		}
		kept[k] = v
	}
	out, _ := json.Marshal(kept) // a map of strings always encodes
	return string(out)
}

// metadataVolume turns the snapshot annotations into the three files.
func metadataVolume() corev1.Volume {
	item := func(file, annotation string) corev1.DownwardAPIVolumeFile {
		return corev1.DownwardAPIVolumeFile{Path: file, FieldRef: &corev1.ObjectFieldSelector{FieldPath: fmt.Sprintf("metadata.annotations['%s']", annotation)}}
	}
	return corev1.Volume{Name: "node-metadata", VolumeSource: corev1.VolumeSource{DownwardAPI: &corev1.DownwardAPIVolumeSource{Items: []corev1.DownwardAPIVolumeFile{
		item("labels.json", NodeLabelsAnnotation),
		item("annotations.json", NodeAnnotationsAnnotation),
		item("packages.json", PackagesAnnotation),
	}}}}
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
