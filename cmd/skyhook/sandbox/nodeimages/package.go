package nodeimages

import (
	"fmt"
	"io/fs"
	"path"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// PackageDir is where a package image holds the package: the stage pod's
// copy container copies it to the node with cp -r /skyhook-package/. DIR/.
const PackageDir = "skyhook-package"

// PackageSpec is the content of a package image.
type PackageSpec struct {
	// Busybox is the path of a static busybox (see Busybox): the copy
	// container runs its sh, mkdir and cp.
	Busybox string
	// Config is /skyhook-package/config.json, as given: Package does not
	// check it, so that a test can ship a broken one (ShellPackage makes
	// valid ones).
	Config []byte
	// Files are the package's other files by path under /skyhook-package:
	// the steps under skyhook_dir/, and under root_dir/ what the agent
	// copies over the host's root before the steps run.
	Files map[string]File
}

// File is a file of a package.
type File struct {
	Content []byte
	// Mode is the permission bits; zero is 0644. Steps need 0755.
	Mode fs.FileMode
}

// Package is the image of a package: busybox, its applets in /bin, and
// /skyhook-package with config.json and the files, in two layers (busybox's
// is the one the pause image has). It has no entrypoint: the stage pod
// names the command. The same spec gives the same digest.
func Package(spec PackageSpec) (v1.Image, error) {
	bb, err := busyboxLayer(spec.Busybox)
	if err != nil {
		return nil, err
	}
	if len(spec.Config) == 0 {
		return nil, fmt.Errorf("the package has no config.json")
	}
	if _, ok := spec.Files["config.json"]; ok {
		return nil, fmt.Errorf("config.json is in Files and in Config; give it as Config")
	}
	entries := []entry{{path: path.Join(PackageDir, "config.json"), mode: 0o644, data: spec.Config}}
	for name, f := range spec.Files {
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		if !fs.ValidPath(name) || name == "." {
			return nil, fmt.Errorf("file %q: not a relative path inside %s", name, PackageDir)
		}
		entries = append(entries, entry{path: path.Join(PackageDir, name), mode: mode, data: f.Content})
	}
	pkg, err := layer(entries)
	if err != nil {
		return nil, err
	}
	return image(nil, bb, pkg)
}
