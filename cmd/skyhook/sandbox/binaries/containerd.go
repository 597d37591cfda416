package binaries

import (
	"context"
	"fmt"
	"strings"
)

// ContainerdVersion is the containerd that real nodes run when they need
// what Debian's containerd (1.6) lacks: image volumes, which containerd
// mounts from 2.1 (kubeletnode.Options.BuiltContainerd).
const ContainerdVersion = "v2.2.9"

// EnsureContainerd builds containerd, its runc shim and ctr at
// ContainerdVersion into the cache unless they are there, and returns
// their directory: the shim must be on containerd's PATH. runc and the
// CNI plugins stay Debian's.
func EnsureContainerd(ctx context.Context, opts Options) (string, error) {
	if err := opts.withDefaults(); err != nil {
		return "", err
	}
	r := containerdRecipe(ContainerdVersion)
	dir, err := ensure(ctx, opts, r)
	if err != nil {
		return "", fmt.Errorf("building %s %s: %w", r.name, r.version, err)
	}
	return dir, nil
}

// containerdRecipe builds containerd without the btrfs snapshotter, whose
// cgo wants btrfs headers this machine need not have; real nodes use
// overlayfs. The version is stamped as containerd reports it to the
// kubelet (status.nodeInfo.containerRuntimeVersion).
func containerdRecipe(version string) recipe {
	const module = "github.com/containerd/containerd/v2"
	return recipe{
		name:     "containerd",
		version:  version,
		module:   module,
		packages: []string{module + "/cmd/containerd", module + "/cmd/containerd-shim-runc-v2", module + "/cmd/ctr"},
		tags:     "no_btrfs",
		ldflags:  "-X " + module + "/version.Version=" + strings.TrimPrefix(version, "v"),
		assign:   func(*Set, string) {},
	}
}
