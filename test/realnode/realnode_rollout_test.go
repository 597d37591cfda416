package realnode

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// hostFiles is a package whose steps leave their mark in $OUT on the host:
// apply writes what its environment says, config copies the configMap and
// the node's labels file, upgrade says from which version to which, and
// uninstall removes what apply and config wrote.
func hostFiles(t *testing.T, version string) string {
	modes := map[string][]nodeimages.ShellStep{
		"apply":           {nodeimages.Step("write", `echo "applied $SKYHOOK_VERSION with $GREETING on $SKYHOOK_NODE_NAME" > "$OUT/applied"`)},
		"apply-check":     {nodeimages.Step("written", `grep -q "^applied $SKYHOOK_VERSION" "$OUT/applied"; echo checked >> "$OUT/checks"`)},
		"config":          {nodeimages.Step("copy", `cp configmaps/greeting.txt "$OUT/greeting.txt"; cp node-metadata/labels.json "$OUT/labels.json"`)},
		"config-check":    {nodeimages.Step("copied", `test -s "$OUT/greeting.txt"; echo checked >> "$OUT/checks"`)},
		"upgrade":         {{Name: "migrate", Script: `echo "upgraded from $1 to $2" > "$OUT/upgraded"`, UpgradeStep: true}},
		"upgrade-check":   {nodeimages.Step("migrated", `test -s "$OUT/upgraded"`)},
		"uninstall":       {nodeimages.Step("remove", `rm -f "$OUT/applied" "$OUT/greeting.txt"; echo "uninstalled $SKYHOOK_VERSION" > "$OUT/uninstalled"`)},
		"uninstall-check": {nodeimages.Step("removed", `test ! -e "$OUT/applied"`)},
	}
	return pushPackage(t, "hostfiles", version, modes)
}

// TestShellPackageOnTheHost installs a package on the real node (apply
// and config with a configMap and env, their checks), upgrades it and
// uninstalls it, checking this machine's filesystem after each.
func TestShellPackageOnTheHost(t *testing.T) {
	needRealNode(t)
	const name = "host-files"
	image := hostFiles(t, "1.0.0")
	hostFiles(t, "1.1.0")
	out := outDir(t, name)
	created := stagePodsCreated(t, name)
	create(t, onRealNode(name, map[string]skyhookv1.Package{
		"hostfiles": {
			PackageRef: skyhookv1.PackageRef{Name: "hostfiles", Version: "1.0.0"},
			Image:      image,
			Env:        []corev1.EnvVar{{Name: "GREETING", Value: "hello-from-env"}},
			ConfigMap:  map[string]string{"greeting.txt": "hello from the configMap\n"},
			Uninstall:  &skyhookv1.Uninstall{Enabled: true},
		},
	}))
	waitSkyhook(t, name, skyhookv1.StatusComplete, 3*time.Minute)

	if got, want := readHost(t, filepath.Join(out, "applied")), "applied 1.0.0 with hello-from-env on "+node.Name+"\n"; got != want {
		t.Errorf("apply wrote %q, want %q", got, want)
	}
	if got := readHost(t, filepath.Join(out, "greeting.txt")); got != "hello from the configMap\n" {
		t.Errorf("config copied %q from the configMap", got)
	}
	if got := strings.Count(readHost(t, filepath.Join(out, "checks")), "checked"); got != 2 {
		t.Errorf("%d checks ran, want apply-check and config-check", got)
	}
	var labels map[string]string
	if err := json.Unmarshal([]byte(readHost(t, filepath.Join(out, "labels.json"))), &labels); err != nil {
		t.Fatalf("node-metadata/labels.json: %v", err)
	}
	if labels["kubernetes.io/hostname"] != node.Name {
		t.Errorf("node-metadata/labels.json has hostname %q, want %q", labels["kubernetes.io/hostname"], node.Name)
	}
	copyDir := filepath.Join("/var/lib/skyhook", name, "hostfiles", "1.0.0")
	if _, err := os.Stat(copyDir); err != nil {
		t.Errorf("the copy step left no package copy on the host: %v", err)
	}
	installMountedItsPackage(t, created())

	t.Run("upgrade", func(t *testing.T) {
		update(t, name, func(sk *skyhookv1.Skyhook) {
			p := sk.Spec.Packages["hostfiles"]
			p.Version = "1.1.0"
			sk.Spec.Packages["hostfiles"] = p
		})
		waitPackage(t, name, "hostfiles", "1.1.0", "", skyhookv1.StateComplete, 3*time.Minute)
		waitSkyhook(t, name, skyhookv1.StatusComplete, time.Minute)
		if got := readHost(t, filepath.Join(out, "upgraded")); got != "upgraded from 1.0.0 to 1.1.0\n" {
			t.Errorf("the upgrade step wrote %q", got)
		}
	})

	t.Run("uninstall", func(t *testing.T) {
		update(t, name, func(sk *skyhookv1.Skyhook) {
			p := sk.Spec.Packages["hostfiles"]
			p.Uninstall = &skyhookv1.Uninstall{Enabled: true, Apply: true}
			sk.Spec.Packages["hostfiles"] = p
		})
		testenv.Eventually(t, "the uninstall to remove what apply wrote", 3*time.Minute, func() bool {
			_, err := os.Stat(filepath.Join(out, "applied"))
			return os.IsNotExist(err)
		})
		waitSkyhook(t, name, skyhookv1.StatusComplete, 2*time.Minute)
		if got := readHost(t, filepath.Join(out, "uninstalled")); got != "uninstalled 1.1.0\n" {
			t.Errorf("the uninstall step wrote %q", got)
		}
		if _, err := os.Stat(filepath.Join(out, "greeting.txt")); !os.IsNotExist(err) {
			t.Errorf("what config wrote is still there: %v", err)
		}
	})
}

// installMountedItsPackage checks that the install's pod (the first)
// copied its package as the node allows: on the built containerd (image
// volumes) by mounting the package image, with no copy container; on the
// machine's containerd 1.6 with one.
func installMountedItsPackage(t *testing.T, pods []*corev1.Pod) {
	t.Helper()
	if len(pods) == 0 {
		t.Fatal("no stage pod was seen")
	}
	install := pods[0]
	copier := slices.ContainsFunc(install.Spec.InitContainers, func(c corev1.Container) bool { return c.Name == stagepod.CopyContainer("hostfiles") })
	mounted := slices.ContainsFunc(install.Spec.Volumes, func(v corev1.Volume) bool { return v.Image != nil })
	if wantMount := *containerd == "built"; mounted != wantMount || copier == wantMount {
		t.Errorf("containerd %s: the install's pod mounts the package image: %v, has a copy container: %v; want an image volume: %v",
			*containerd, mounted, copier, wantMount)
	}
}
