package nodeimages

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// ShellStep is a step of a ShellPackage: a shell script that the agent runs
// chrooted into the node's root (on_host), so with the node's /bin/sh.
type ShellStep struct {
	// Name is the step's name, unique within its mode.
	Name string
	// Script is the script's body; "#!/bin/sh" is added when it has no
	// "#!" line of its own.
	Script string
	// UpgradeStep marks a step of the upgrade modes that gets the previous
	// and the new version as its two arguments.
	UpgradeStep bool
	// RunOnce marks a step that is not idempotent: in apply and
	// post-interrupt the agent runs it once and skips it after (its
	// run-once flag), where it runs an idempotent step again each time its
	// stage runs.
	RunOnce bool
}

// ShellPackage is the spec of a package whose steps are shell scripts, by
// mode ("apply", "apply-check", ...): the common case of a test package,
// without writing config.json by hand. Each step is
// skyhook_dir/<mode>/<name>.sh, idempotent unless RunOnce, run on the
// host, with no arguments, and succeeds on exit code 0. The config.json is checked as the
// agent would check it (so an action mode without its check mode is an
// error here rather than in the stage pod). Add root_dir files to the
// spec's Files before calling Package.
func ShellPackage(busybox, name, version string, modes map[string][]ShellStep) (PackageSpec, error) {
	cfg := pkgconfig.Config{SchemaVersion: "v1", PackageName: name, PackageVersion: version,
		ExpectedConfigFiles: []string{}, Modes: map[string][]pkgconfig.Step{}}
	files := map[string]File{}
	for _, mode := range slices.Sorted(maps.Keys(modes)) {
		steps := []pkgconfig.Step{}
		for _, s := range modes[mode] {
			p := path.Join(mode, s.Name+".sh")
			script := s.Script
			if !strings.HasPrefix(script, "#!") {
				script = "#!/bin/sh\n" + script
			}
			files[path.Join("skyhook_dir", p)] = File{Content: []byte(script), Mode: 0o755}
			steps = append(steps, pkgconfig.Step{Name: s.Name, Path: p, Arguments: []string{},
				Returncodes: []int{0}, OnHost: true, Env: map[string]string{}, Idempotence: !s.RunOnce, UpgradeStep: s.UpgradeStep})
		}
		cfg.Modes[mode] = steps
	}
	data, err := json.MarshalIndent(cfg, "", "  ")
	if err != nil {
		return PackageSpec{}, err
	}
	if _, problems := pkgconfig.Parse(data); len(problems) > 0 {
		return PackageSpec{}, fmt.Errorf("the package's config.json:\n%w", problems)
	}
	return PackageSpec{Busybox: busybox, Config: append(data, '\n'), Files: files}, nil
}

// Step is a ShellStep whose script stops at the first command that fails
// or the first unset variable (set -eu), as test and demo steps want.
func Step(name, script string) ShellStep {
	return ShellStep{Name: name, Script: "set -eu\n" + script}
}

// PushShellPackage builds a ShellPackage and pushes it as
// packages/<name>:<version>; it returns the image without the tag, as a
// Skyhook's package names it.
func (r *Registry) PushShellPackage(ctx context.Context, busybox, name, version string, modes map[string][]ShellStep) (string, error) {
	spec, err := ShellPackage(busybox, name, version, modes)
	if err != nil {
		return "", err
	}
	img, err := Package(spec)
	if err != nil {
		return "", err
	}
	repo := "packages/" + name
	if _, err := r.Push(ctx, repo+":"+version, img); err != nil {
		return "", err
	}
	return r.Host() + "/" + repo, nil
}
