package binaries

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// KubeletVersion is the kubelet of the real node (see kubeletnode.Node).
// 1.35 is the last minor whose kubelet still talks to containerd 1.x (what
// Debian ships), and a kubelet may be up to three minors older than the
// apiserver, so it joins the v1.36 control plane.
const KubeletVersion = "v1.35.4"

// EnsureKubelet builds the kubelet into the cache unless it is there (once
// per version: about 8 minutes cold on two cores), and returns its path.
// Only the real-node tests and `sandbox up --real-node` ask for it.
func EnsureKubelet(ctx context.Context, opts Options) (string, error) {
	return ensureNodeComponent(ctx, opts, "kubelet")
}

// EnsureKubeProxy builds kube-proxy, of the kubelet's version, into the
// cache unless it is there, and returns its path. Only real nodes on a
// network run it (Services on them).
func EnsureKubeProxy(ctx context.Context, opts Options) (string, error) {
	return ensureNodeComponent(ctx, opts, "kube-proxy")
}

// ensureNodeComponent builds k8s.io/kubernetes/cmd/<name> at KubeletVersion
// into a cache entry of its own, so that adding one does not rebuild the
// others.
func ensureNodeComponent(ctx context.Context, opts Options, name string) (string, error) {
	if err := opts.withDefaults(); err != nil {
		return "", err
	}
	r := nodeComponentRecipe(name, KubeletVersion)
	dir, err := ensure(ctx, opts, r)
	if err != nil {
		return "", fmt.Errorf("building %s %s: %w", r.name, r.version, err)
	}
	return filepath.Join(dir, name), nil
}

// nodeComponentRecipe builds a node component of k8s.io/kubernetes (the
// kubelet, kube-proxy) with the release's version stamped, as the node
// reports it and the apiserver's skew checks read it.
func nodeComponentRecipe(name, version string) recipe {
	minor := strings.SplitN(strings.TrimPrefix(version, "v"), ".", 3)
	return recipe{
		name:     name,
		version:  version,
		module:   "k8s.io/kubernetes",
		replaces: kubernetesStaging(version),
		packages: []string{"k8s.io/kubernetes/cmd/" + name},
		ldflags: fmt.Sprintf("-X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s -X k8s.io/component-base/version.gitTreeState=clean",
			version, minor[0], minor[1]),
		assign: func(*Set, string) {},
	}
}
