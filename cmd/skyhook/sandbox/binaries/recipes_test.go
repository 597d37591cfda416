package binaries

import (
	"context"
	"io"
	"maps"
	"strings"
	"testing"

	"golang.org/x/mod/modfile"
)

func TestWrapperModuleRequiresTheComponentAndReplacesStaging(t *testing.T) {
	data, err := wrapperModule("k8s.io/kubernetes", "v1.36.3", map[string]string{"k8s.io/api": "v0.36.3", "k8s.io/client-go": "v0.36.3"})
	if err != nil {
		t.Fatal(err)
	}
	f, err := modfile.Parse("go.mod", data, nil)
	if err != nil {
		t.Fatalf("not a valid go.mod: %v\n%s", err, data)
	}
	if len(f.Require) != 1 || f.Require[0].Mod.Path != "k8s.io/kubernetes" || f.Require[0].Mod.Version != "v1.36.3" {
		t.Fatalf("require = %v", f.Require)
	}
	replaced := map[string]string{}
	for _, r := range f.Replace {
		replaced[r.Old.Path] = r.New.Path + "@" + r.New.Version
	}
	if replaced["k8s.io/api"] != "k8s.io/api@v0.36.3" || replaced["k8s.io/client-go"] != "k8s.io/client-go@v0.36.3" || len(replaced) != 2 {
		t.Fatalf("replace = %v", replaced)
	}
}

func TestRecipesPinTheRequestedVersions(t *testing.T) {
	v := Versions{Kubernetes: "v1.36.3", Etcd: "v3.5.21", KWOK: "v0.8.0"}
	want := map[string]string{"kubernetes": v.Kubernetes, "etcd": v.Etcd, "kwok": v.KWOK}
	rs := recipes(v)
	if len(rs) != len(want) {
		t.Fatalf("%d recipes, want %d", len(rs), len(want))
	}
	for _, r := range rs {
		if want[r.name] != r.version {
			t.Errorf("%s builds %s, want %s", r.name, r.version, want[r.name])
		}
	}
	if k := rs[0]; k.ldflags == "" || !strings.Contains(k.ldflags, "gitVersion=v1.36.3") || !strings.Contains(k.ldflags, "gitMinor=36") {
		t.Errorf("kubernetes ldflags %q lack the version", k.ldflags)
	}
}

// A cache entry is keyed by what is built, not only the version, so a
// recipe that builds more (a new binary) does not reuse an older entry.
func TestFingerprintFollowsTheRecipe(t *testing.T) {
	r := recipes(DefaultVersions)[0]
	before := r.fingerprint()
	r.packages = append(r.packages[:len(r.packages):len(r.packages)], "k8s.io/kubernetes/cmd/kube-scheduler")
	if r.fingerprint() == before {
		t.Fatal("adding a package did not change the fingerprint")
	}
}

// The cache keys of recipes without placeholders are what they were before
// placeholders existed, so no cached build is redone for them.
func TestFingerprintOfExistingEntriesIsUnchanged(t *testing.T) {
	if got := sourceControllerRecipe("v1.9.5").fingerprint(); got != "9fc807a2" {
		t.Errorf("source-controller v1.9.5 fingerprint %s, want 9fc807a2 (the cache entry's key)", got)
	}
	r := fluxCLIRecipe("v2.9.5")
	before := r.fingerprint()
	r.placeholders = nil
	if r.fingerprint() == before {
		t.Error("placeholders do not change the fingerprint")
	}
}

// kustomize-controller's own go.mod replaces its api module with ./api and
// pins go-digest and kustomize; the wrapper states the same with published
// versions (the go.mod comes from the module proxy).
func TestOwnReplacesMirrorTheComponentsGoMod(t *testing.T) {
	got, err := ownReplaces("github.com/fluxcd/kustomize-controller", "v1.9.5")(context.Background(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"github.com/fluxcd/kustomize-controller/api": "v1.9.5",
		"github.com/opencontainers/go-digest":        "v1.0.1-0.20220411205349-bde1400a84be",
		"sigs.k8s.io/kustomize/api":                  "v0.21.1",
		"sigs.k8s.io/kustomize/kyaml":                "v0.21.1",
		"gopkg.in/yaml.v3":                           "v3.0.1",
	}
	if !maps.Equal(got, want) {
		t.Errorf("replaces %v, want %v", got, want)
	}
}

// A replace to "./dir" is a directory of the wrapper (the copy of a module
// with placeholders), not a version.
func TestWrapperModuleReplacesWithADirectory(t *testing.T) {
	data, err := wrapperModule("github.com/fluxcd/flux2/v2", "v2.9.5", map[string]string{"github.com/fluxcd/flux2/v2": "./module"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "replace github.com/fluxcd/flux2/v2 => ./module\n") {
		t.Fatalf("go.mod:\n%s", data)
	}
}

// Prometheus's module versions name its 3.x releases: v0.316.0 is 3.16.0,
// which the binary is stamped with; what does not follow that scheme is
// left as it is.
func TestPrometheusReleaseOfModuleVersion(t *testing.T) {
	for module, release := range map[string]string{
		"v0.316.0": "3.16.0", "v0.300.1": "3.0.1", "v0.305.12": "3.5.12", "v0.55.0": "v0.55.0", "v1.2.3": "v1.2.3",
	} {
		if got := releaseOf(module); got != release {
			t.Errorf("releaseOf(%s) = %s, want %s", module, got, release)
		}
	}
	if r := prometheusRecipe(PrometheusVersion); !strings.Contains(r.ldflags, "version.Version=3.16.0") || r.tags == "" {
		t.Errorf("the recipe stamps %q with tags %q", r.ldflags, r.tags)
	}
}
