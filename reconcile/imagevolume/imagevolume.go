// Package imagevolume tells whether a stage pod may mount its package
// image as an image volume (Kubernetes' ImageVolume: beta and on by default
// in 1.35, GA in 1.36), so that it needs no container to copy the package:
// the apiserver must keep such a volume (Prober) and the node's kubelet and
// container runtime must mount it (NodeSupports). Where either cannot,
// the stage pod keeps its copy container.
package imagevolume

import (
	"strings"

	"github.com/Masterminds/semver/v3"
	corev1 "k8s.io/api/core/v1"
)

// The oldest versions that mount image volumes without a feature gate an
// admin must turn on: the kubelet turns ImageVolume on by default from
// 1.35; containerd mounts them from 2.1, CRI-O from 1.31.
var (
	minKubelet  = semver.MustParse("1.35.0")
	minRuntimes = map[string]*semver.Version{
		"containerd": semver.MustParse("2.1.0"),
		"cri-o":      semver.MustParse("1.31.0"),
	}
)

// NodeSupports reports whether the node's kubelet and container runtime,
// as the node reports them (status.nodeInfo), mount image volumes; when
// not, why not. A version it cannot read, or a runtime it does not know,
// is a no: the copy container works everywhere.
func NodeSupports(node *corev1.Node) (bool, string) {
	info := node.Status.NodeInfo
	kubelet, err := semver.NewVersion(info.KubeletVersion)
	if err != nil || kubelet.LessThan(minKubelet) {
		return false, "kubelet " + quoted(info.KubeletVersion) + " (image volumes need 1.35 or later)"
	}
	runtime, version, _ := strings.Cut(info.ContainerRuntimeVersion, "://")
	min, known := minRuntimes[runtime]
	if !known {
		return false, "container runtime " + quoted(info.ContainerRuntimeVersion) + " (image volumes need containerd 2.1 or CRI-O 1.31 or later)"
	}
	v, err := semver.NewVersion(version)
	if err != nil || v.LessThan(min) {
		return false, "container runtime " + quoted(info.ContainerRuntimeVersion) + " (image volumes need " + runtime + " " + min.String() + " or later)"
	}
	return true, ""
}

func quoted(s string) string {
	if s == "" {
		return "(not reported)"
	}
	return s
}
