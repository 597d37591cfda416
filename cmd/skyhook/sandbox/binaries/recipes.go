package binaries

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/mod/modfile"
)

// recipe says how to build one component from its Go module.
type recipe struct {
	name    string
	version string
	// module is the main module of the component, required by the wrapper.
	module string
	// replaces computes the wrapper's replace directives (module path to
	// version); the component's own replaces are ignored in a dependency.
	replaces func(ctx context.Context, log io.Writer) (map[string]string, error)
	// packages are the main packages to build.
	packages []string
	ldflags  string
	// tags are go build's -tags, comma-separated.
	tags string
	// files copies files of the module (path inside it) into the output
	// directory (name there).
	files map[string]string
	// placeholders are files the build needs that the module does not ship
	// (path inside it), such as the target of a go:embed the component's
	// own Makefile generates. The build then uses a copy of the module with
	// them added (go refuses to overlay files of the module cache).
	placeholders []string
	assign       func(set *Set, dir string)
}

func recipes(v Versions) []recipe {
	k8sMinor := strings.SplitN(strings.TrimPrefix(v.Kubernetes, "v"), ".", 3)
	return []recipe{
		{
			name:     "kubernetes",
			version:  v.Kubernetes,
			module:   "k8s.io/kubernetes",
			replaces: kubernetesStaging(v.Kubernetes),
			packages: []string{"k8s.io/kubernetes/cmd/kube-apiserver", "k8s.io/kubernetes/cmd/kube-controller-manager", "k8s.io/kubernetes/cmd/kube-scheduler", "k8s.io/kubernetes/cmd/kubectl"},
			// Without a real version, clients that parse the server version
			// (kubectl, discovery) fail.
			ldflags: fmt.Sprintf("-X k8s.io/component-base/version.gitVersion=%s -X k8s.io/component-base/version.gitMajor=%s -X k8s.io/component-base/version.gitMinor=%s -X k8s.io/component-base/version.gitTreeState=clean",
				v.Kubernetes, k8sMinor[0], k8sMinor[1]),
			assign: func(s *Set, dir string) {
				s.KubeAPIServer = filepath.Join(dir, "kube-apiserver")
				s.KubeControllerManager = filepath.Join(dir, "kube-controller-manager")
				s.KubeScheduler = filepath.Join(dir, "kube-scheduler")
				s.Kubectl = filepath.Join(dir, "kubectl")
			},
		},
		{
			name:     "etcd",
			version:  v.Etcd,
			module:   "go.etcd.io/etcd/server/v3",
			packages: []string{"go.etcd.io/etcd/server/v3"},
			assign: func(s *Set, dir string) {
				// go build names the binary after the path without its /v3.
				s.Etcd = filepath.Join(dir, "server")
			},
		},
		{
			name:     "kwok",
			version:  v.KWOK,
			module:   "sigs.k8s.io/kwok",
			packages: []string{"sigs.k8s.io/kwok/cmd/kwok"},
			ldflags:  "-X sigs.k8s.io/kwok/pkg/consts.Version=" + v.KWOK,
			files: map[string]string{
				"kustomize/crd/bases/kwok.x-k8s.io_stages.yaml": "stage-crd.yaml",
				"kustomize/crd/bases/kwok.x-k8s.io_logs.yaml":   "logs-crd.yaml",
			},
			assign: func(s *Set, dir string) {
				s.KWOK = filepath.Join(dir, "kwok")
				s.KWOKCRDs = []string{filepath.Join(dir, "stage-crd.yaml"), filepath.Join(dir, "logs-crd.yaml")}
			},
		},
	}
}

// build writes the wrapper module to a temporary directory and builds the
// recipe's packages into out.
func (r recipe) build(ctx context.Context, out string, log io.Writer) error {
	work, err := os.MkdirTemp("", "skyhook-wrapper-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	replaces := map[string]string{}
	if r.replaces != nil {
		if replaces, err = r.replaces(ctx, log); err != nil {
			return err
		}
	}
	if len(r.placeholders) > 0 {
		if replaces == nil {
			replaces = map[string]string{}
		}
		if replaces[r.module], err = r.withPlaceholders(ctx, work, log); err != nil {
			return err
		}
	}
	mod, err := wrapperModule(r.module, r.version, replaces)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(work, "go.mod"), mod, 0o644); err != nil {
		return err
	}
	args := []string{"build", "-mod=mod", "-trimpath", "-o", out + string(filepath.Separator)}
	if r.ldflags != "" {
		args = append(args, "-ldflags", r.ldflags)
	}
	if r.tags != "" {
		args = append(args, "-tags", r.tags)
	}
	args = append(args, r.packages...)
	if _, err := goCmd(ctx, work, log, args...); err != nil {
		return err
	}
	if len(r.files) == 0 {
		return nil
	}
	dir, err := goCmd(ctx, work, log, "list", "-mod=mod", "-m", "-f", "{{.Dir}}", r.module)
	if err != nil {
		return err
	}
	for from, to := range r.files {
		data, err := os.ReadFile(filepath.Join(strings.TrimSpace(dir), from))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, to), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// withPlaceholders copies the module out of the read-only module cache
// into work, adds the placeholders, and returns the copy's directory as a
// replace of the wrapper states it.
func (r recipe) withPlaceholders(ctx context.Context, work string, log io.Writer) (string, error) {
	mod, err := download(ctx, log, r.module, r.version)
	if err != nil {
		return "", err
	}
	const dir = "./module"
	if err := os.CopyFS(filepath.Join(work, dir), os.DirFS(mod.Dir)); err != nil {
		return "", err
	}
	for _, p := range r.placeholders {
		path := filepath.Join(work, dir, p)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte("# not shipped in the module; the skyhook build put this placeholder here\n"), 0o644); err != nil {
			return "", err
		}
	}
	return dir, nil
}

// wrapperModule is the go.mod of a module that only requires module@version,
// with the given replace directives: module path to version, or to a
// directory of the wrapper when it starts with "./".
func wrapperModule(module, version string, replaces map[string]string) ([]byte, error) {
	f := &modfile.File{}
	if err := f.AddModuleStmt("skyhook.local/wrapper"); err != nil {
		return nil, err
	}
	if err := f.AddGoStmt(strings.TrimPrefix(runtime.Version(), "go")); err != nil {
		return nil, err
	}
	if err := f.AddRequire(module, version); err != nil {
		return nil, err
	}
	for path, v := range replaces {
		to := path
		if strings.HasPrefix(v, "./") {
			to, v = v, ""
		}
		if err := f.AddReplace(path, "", to, v); err != nil {
			return nil, err
		}
	}
	f.Cleanup()
	return f.Format()
}

// kubernetesStaging reads k8s.io/kubernetes' own go.mod and maps each staging
// module it replaces with a local directory to the matching published
// release (v1.X.Y is published as v0.X.Y).
func kubernetesStaging(version string) func(context.Context, io.Writer) (map[string]string, error) {
	return func(ctx context.Context, log io.Writer) (map[string]string, error) {
		f, err := componentGoMod(ctx, log, "k8s.io/kubernetes", version)
		if err != nil {
			return nil, err
		}
		staging := "v0" + strings.TrimPrefix(version, "v1")
		replaces := map[string]string{}
		for _, r := range f.Replace {
			if strings.HasPrefix(r.New.Path, "./staging/") {
				replaces[r.Old.Path] = staging
			}
		}
		if len(replaces) == 0 {
			return nil, fmt.Errorf("k8s.io/kubernetes %s replaces no staging modules; cannot build it", version)
		}
		return replaces, nil
	}
}

// ownReplaces states in the wrapper the replaces of the component's own
// go.mod, which go ignores in a dependency: one with a published version
// is copied, one with a directory of the component's repository (its api
// module) becomes that module at the component's version.
func ownReplaces(module, version string) func(context.Context, io.Writer) (map[string]string, error) {
	return func(ctx context.Context, log io.Writer) (map[string]string, error) {
		f, err := componentGoMod(ctx, log, module, version)
		if err != nil {
			return nil, err
		}
		replaces := map[string]string{}
		for _, r := range f.Replace {
			switch {
			case r.New.Version != "" && r.New.Path == r.Old.Path:
				replaces[r.Old.Path] = r.New.Version
			case r.New.Version == "" && strings.HasPrefix(r.Old.Path, module+"/"):
				replaces[r.Old.Path] = version
			default:
				return nil, fmt.Errorf("%s %s replaces %s with %s %s, which a wrapper cannot state", module, version, r.Old.Path, r.New.Path, r.New.Version)
			}
		}
		return replaces, nil
	}
}

// componentGoMod parses module@version's go.mod.
func componentGoMod(ctx context.Context, log io.Writer, module, version string) (*modfile.File, error) {
	mod, err := download(ctx, log, module, version)
	if err != nil {
		return nil, err
	}
	data, err := os.ReadFile(mod.GoMod)
	if err != nil {
		return nil, err
	}
	return modfile.Parse(mod.GoMod, data, nil)
}

// downloaded is where go mod download put a module.
type downloaded struct{ Dir, GoMod string }

// download fetches module@version into the module cache.
func download(ctx context.Context, log io.Writer, module, version string) (downloaded, error) {
	var mod downloaded
	work, err := os.MkdirTemp("", "skyhook-modinfo-")
	if err != nil {
		return mod, err
	}
	defer os.RemoveAll(work)
	out, err := goCmd(ctx, work, log, "mod", "download", "-json", module+"@"+version)
	if err != nil {
		return mod, err
	}
	if err := json.Unmarshal([]byte(out), &mod); err != nil {
		return mod, fmt.Errorf("reading go mod download output: %w", err)
	}
	return mod, nil
}

// goCmd runs the go command in dir and returns its standard output. Module
// downloads and compiler errors go to log as they happen.
func goCmd(ctx context.Context, dir string, log io.Writer, args ...string) (string, error) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		goBin = filepath.Join(runtime.GOROOT(), "bin", "go")
	}
	cmd := exec.CommandContext(ctx, goBin, args...)
	cmd.Dir = dir
	// A workspace, vendoring or a toolchain switch from the caller's
	// environment would change what gets built.
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=", "GOTOOLCHAIN=local", "CGO_ENABLED=0")
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = io.MultiWriter(&stderr, log)
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("go %s: %w\n%s", strings.Join(args, " "), err, tail(stderr.String(), 40))
	}
	return stdout.String(), nil
}

// tail keeps the last n lines of s.
func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
