package stagepod

import (
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/skyhook-go/skyhook/api/imageref"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

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

// Shape is how a stage pod lays a package's stages out in containers.
type Shape string

const (
	// Compact, the default: after the package copy, one container per
	// stage, <pkg>-<stage>, in which the agent runs the stage and then its
	// check (agent mode "apply,apply-check"), with a marker line before
	// each in the log (agent/modelog). An interrupt has no check.
	Compact Shape = "compact"
	// NodeWright: the stage's check in a container of its own,
	// <pkg>-<stage>check, as NodeWright's stage pods have it, for those
	// who script against those names. Each container costs a kubelet a
	// sync to start and the control plane a status write of the pod.
	NodeWright Shape = "nodewright"
)

// Shapes are the shapes, the default first.
var Shapes = []Shape{Compact, NodeWright}

// ParseShape is the shape of the name (empty is the default), or an error
// that names the shapes there are.
func ParseShape(name string) (Shape, error) {
	if name == "" {
		return Compact, nil
	}
	if shape := Shape(name); slices.Contains(Shapes, shape) {
		return shape, nil
	}
	return "", fmt.Errorf("stage container shape %q: want compact or nodewright", name)
}

// PackageMount is where a stage container mounts the package image when
// the pod has no copy container (Spec.ImageVolume); the image's files are
// under skyhook-package in it (SKYHOOK_PACKAGE_SOURCE). Not
// /skyhook-package itself: the configMap is mounted beneath that, and an
// image volume is read-only.
const PackageMount = "/skyhook-package-image"

// mountsPackage reports whether the spec's pod mounts its packages' images
// (an image volume each) in place of copy containers.
func (s Spec) mountsPackage() bool { return s.ImageVolume && s.Shape != NodeWright }

// containers are the pod's init containers: the copy (unless the pod mounts the package image), then each stage with
// its check (in its own container in the NodeWright shape).
func (s Spec) containers() []corev1.Container {
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
			VolumeMounts:    mounts(s),
		}
	}
	var init []corev1.Container
	if !s.mountsPackage() {
		init = append(init, corev1.Container{
			Name:            CopyContainer(s.Package),
			Image:           packageImage(s.Image, s.Version, pkg.ContainerSHA),
			Command:         []string{"/bin/sh", "-c", fmt.Sprintf("mkdir -p %[1]s && cp -r /skyhook-package/. %[1]s/", copyDir)},
			SecurityContext: &corev1.SecurityContext{Privileged: &privileged},
			VolumeMounts:    []corev1.VolumeMount{{Name: "host-root", MountPath: HostRoot}},
		})
	}
	for _, stage := range s.Stages() {
		mode := agentMode(stage)
		switch {
		case !HasCheck(stage):
			init = append(init, agentContainer(StageContainer(s.Package, stage), mode, stage))
		case s.Shape == NodeWright:
			init = append(init, agentContainer(StageContainer(s.Package, stage), mode, stage),
				agentContainer(CheckContainer(s.Package, stage), CheckMode(stage), stage))
		default:
			init = append(init, agentContainer(StageContainer(s.Package, stage), mode+","+CheckMode(stage), stage))
		}
	}
	return init
}

// HasCheck reports whether the stage has a check: every stage but an
// interrupt (after an install or an uninstall) does.
func HasCheck(stage skyhookv1.Stage) bool {
	return agentMode(stage) != string(skyhookv1.StageInterrupt)
}

// CheckMode is the agent's mode for the stage's check (its part of the
// stage container's log in the compact shape, agent/modelog).
func CheckMode(stage skyhookv1.Stage) string { return string(stage) + "-check" }

func stageEnv(s Spec, stage skyhookv1.Stage) []corev1.EnvVar {
	env := []corev1.EnvVar{
		{Name: "SKYHOOK_NAME", Value: s.Skyhook.Name},
		{Name: "SKYHOOK_PACKAGE", Value: s.Package},
		{Name: "SKYHOOK_VERSION", Value: s.Version},
		{Name: "SKYHOOK_STAGE", Value: string(stage)},
		{Name: "SKYHOOK_GENERATION", Value: strconv.FormatInt(s.Skyhook.Generation, 10)},
		{Name: "SKYHOOK_NODE_NAME", ValueFrom: &corev1.EnvVarSource{FieldRef: &corev1.ObjectFieldSelector{FieldPath: "spec.nodeName"}}},
		{Name: "SKYHOOK_NODE_ORDER", Value: strconv.Itoa(s.NodeOrder)},
	}
	if s.mountsPackage() {
		env = append(env, corev1.EnvVar{Name: "SKYHOOK_PACKAGE_SOURCE", Value: path.Join(PackageMount, "skyhook-package")})
	}
	return env
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

// mounts are the volumes a stage container mounts.
func mounts(s Spec) []corev1.VolumeMount {
	m := []corev1.VolumeMount{{Name: "host-root", MountPath: HostRoot}, {Name: "node-metadata", MountPath: NodeMetadataDir, ReadOnly: true}}
	if s.mountsPackage() {
		m = append(m, corev1.VolumeMount{Name: packageVolume, MountPath: PackageMount, ReadOnly: true})
	}
	if s.ConfigMap != "" {
		m = append(m, corev1.VolumeMount{Name: configVolume, MountPath: "/skyhook-package/configmaps", ReadOnly: true})
	}
	return m
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
