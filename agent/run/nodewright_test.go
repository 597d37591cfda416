package run

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The behaviours of NodeWright's agent that a package can notice, each on a
// package of this test's own.

// onceConfig has a step with idempotence false in every kind of mode; each
// appends its mode to a count file.
const onceConfig = `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "apply":[{"name":"once","path":"count.sh","arguments":["apply"],"idempotence":false},{"name":"always","path":"count.sh","arguments":["apply-always"]}],
 "apply-check":[{"name":"once","path":"count.sh","arguments":["apply-check"],"idempotence":false}],
 "config":[{"name":"once","path":"count.sh","arguments":["config"],"idempotence":false}],
 "config-check":[{"name":"once","path":"count.sh","arguments":["config-check"],"idempotence":false}],
 "post-interrupt":[{"name":"once","path":"count.sh","arguments":["post-interrupt"],"idempotence":false}],
 "post-interrupt-check":[{"name":"once","path":"count.sh","arguments":["post-interrupt-check"],"idempotence":false}],
 "upgrade":[{"name":"once","path":"count.sh","arguments":["upgrade"],"idempotence":false}],
 "upgrade-check":[{"name":"once","path":"count.sh","arguments":["upgrade-check"],"idempotence":false}],
 "uninstall":[{"name":"once","path":"count.sh","arguments":["uninstall"],"idempotence":false}],
 "uninstall-check":[{"name":"once","path":"count.sh","arguments":["uninstall-check"],"idempotence":false}]}}`

var onceScripts = map[string]string{"count.sh": "echo \"$1\" >> /tmp/count\n"}

// runModes runs the modes in order and fails the test on an error.
func runModes(t *testing.T, p pkg, version string, modify func(*Options), modes ...string) {
	t.Helper()
	for _, mode := range modes {
		var out bytes.Buffer
		o := options(p, mode, version, "1", &out)
		if modify != nil {
			modify(&o)
		}
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out.String())
		}
	}
}

// counts reads how often each argument was counted.
func counts(t *testing.T, root string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "tmp", "count"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, l := range strings.Fields(string(data)) {
		n[l]++
	}
	return n
}

// A step with idempotence false runs once per version in apply and
// post-interrupt only: config, upgrade and uninstall run it again, and a
// check mode never skips; a step with idempotence true always runs. After
// uninstall-check the version's flags are gone, so a reinstall runs
// everything again. OVERLAY_ALWAYS_RUN_STEP runs the flagged steps too.
func TestRunOnceAsNodeWright(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", onceConfig, onceScripts, nil)
	all := []string{"apply", "apply-check", "config", "config-check", "post-interrupt", "post-interrupt-check", "upgrade", "upgrade-check"}
	runModes(t, p, "1.0.0", nil, all...)
	runModes(t, p, "1.0.0", nil, all...)
	want := map[string]int{"apply": 1, "apply-always": 2, "post-interrupt": 1,
		"apply-check": 2, "config": 2, "config-check": 2, "post-interrupt-check": 2, "upgrade": 2, "upgrade-check": 2}
	if got := counts(t, root); !equalCounts(got, want) {
		t.Errorf("after two rounds: %v, want %v", got, want)
	}
	runModes(t, p, "1.0.0", func(o *Options) { o.AlwaysRunSteps = true }, "apply", "post-interrupt")
	want["apply"], want["apply-always"], want["post-interrupt"] = 2, 3, 2
	if got := counts(t, root); !equalCounts(got, want) {
		t.Errorf("with OVERLAY_ALWAYS_RUN_STEP: %v, want %v", got, want)
	}
	flags := filepath.Join(root, "var/lib/skyhook/demo/flags/tuning/1.0.0")
	if _, err := os.Stat(filepath.Join(flags, "apply")); err != nil {
		t.Fatalf("no apply flags: %v", err)
	}
	if entries, _ := os.ReadDir(filepath.Join(flags, "apply")); len(entries) != 1 {
		t.Errorf("apply flags %v, want only the run-once step's", entries)
	}
	runModes(t, p, "1.0.0", nil, "uninstall", "uninstall")
	want["uninstall"] = 2
	if _, err := os.Stat(flags); err != nil {
		t.Errorf("the flags went before uninstall-check: %v", err)
	}
	runModes(t, p, "1.0.0", nil, "uninstall-check")
	if _, err := os.Stat(flags); !os.IsNotExist(err) {
		t.Errorf("flags of the uninstalled version still there: %v", err)
	}
	runModes(t, p, "1.0.0", nil, "apply", "post-interrupt")
	want["uninstall-check"], want["apply"], want["apply-always"], want["post-interrupt"] = 1, 3, 4, 3
	if got := counts(t, root); !equalCounts(got, want) {
		t.Errorf("after uninstall and a new install: %v, want %v", got, want)
	}
}

// A failed run-once step leaves no flag: it runs again.
func TestFailedRunOnceStepRunsAgain(t *testing.T) {
	root := newRoot(t)
	conf := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "apply":[{"name":"once","path":"flaky.sh","idempotence":false}],"apply-check":[{"name":"c","path":"flaky.sh"}]}}`
	p := newPackage(t, root, "1.0.0", conf, map[string]string{"flaky.sh": "echo x >> /tmp/count\ntest -f /tmp/ok\n"}, nil)
	var out bytes.Buffer
	if _, err := Run(context.Background(), options(p, "apply", "1.0.0", "1", &out)); err == nil {
		t.Fatal("the failing step passed")
	}
	if err := os.WriteFile(filepath.Join(root, "tmp", "ok"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	runModes(t, p, "1.0.0", nil, "apply", "apply")
	if got := counts(t, root)["x"]; got != 2 {
		t.Errorf("%d runs, want 2 (failed, then succeeded; the third skipped)", got)
	}
}

// NodeWright's history: written after apply-check, upgrade-check and
// uninstall-check; steps of the upgrade modes get PREVIOUS_VERSION and
// CURRENT_VERSION (and this project's SKYHOOK_ names), "unknown" without a
// history and "uninstalled" after an uninstall; an upgrade step gets both
// as its last arguments; the current version is config.json's.
func TestUpgradeVersionsAsNodeWright(t *testing.T) {
	conf := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "apply":[{"name":"a","path":"seen.sh"}],"apply-check":[{"name":"a","path":"seen.sh"}],
 "upgrade":[{"name":"plain","path":"seen.sh","arguments":["x"]},{"name":"up","path":"seen.sh","upgrade_step":true}],
 "upgrade-check":[{"name":"up","path":"seen.sh","upgrade_step":true}],
 "uninstall":[{"name":"a","path":"seen.sh"}],"uninstall-check":[{"name":"a","path":"seen.sh"}]}}`
	seen := map[string]string{"seen.sh": `echo "args=$* prev=${PREVIOUS_VERSION-unset} cur=${CURRENT_VERSION-unset} sk=${SKYHOOK_PREVIOUS_VERSION-unset},${SKYHOOK_CURRENT_VERSION-unset}" >> /tmp/seen` + "\n"}
	lines := func(root string) []string {
		data, _ := os.ReadFile(filepath.Join(root, "tmp", "seen"))
		_ = os.Remove(filepath.Join(root, "tmp", "seen"))
		return strings.Split(strings.TrimSpace(string(data)), "\n")
	}
	root := newRoot(t)
	p := newPackage(t, root, "2.0.0", conf, seen, nil)
	runModes(t, p, "2.0.0", nil, "upgrade", "upgrade-check")
	want := []string{
		"args=x prev=unknown cur=2.0.0 sk=unknown,2.0.0",
		"args=unknown 2.0.0 prev=unknown cur=2.0.0 sk=unknown,2.0.0",
		"args=unknown 2.0.0 prev=unknown cur=2.0.0 sk=unknown,2.0.0",
	}
	if got := lines(root); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("without a history:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	root = newRoot(t)
	old := newPackage(t, root, "1.0.0", conf, seen, nil)
	runModes(t, old, "1.0.0", nil, "apply", "apply-check")
	if got := lines(root); strings.Join(got, "\n") != "args= prev=unset cur=unset sk=unset,unset\nargs= prev=unset cur=unset sk=unset,unset" {
		t.Errorf("apply steps got versions: %q", got)
	}
	p = newPackage(t, root, "2.0.0", conf, seen, nil)
	runModes(t, p, "2.0.0", nil, "upgrade", "upgrade-check")
	want = []string{
		"args=x prev=1.0.0 cur=2.0.0 sk=1.0.0,2.0.0",
		"args=1.0.0 2.0.0 prev=1.0.0 cur=2.0.0 sk=1.0.0,2.0.0",
		"args=1.0.0 2.0.0 prev=1.0.0 cur=2.0.0 sk=1.0.0,2.0.0",
	}
	if got := lines(root); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("after 1.0.0:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	runModes(t, p, "2.0.0", nil, "uninstall", "uninstall-check")
	lines(root)
	var hist History
	if err := json.Unmarshal([]byte(read(t, root, "var/lib/skyhook/demo/history/tuning.json")), &hist); err != nil {
		t.Fatal(err)
	}
	var versions []string
	for _, e := range hist.History {
		versions = append(versions, e.Version)
		if !strings.HasSuffix(e.Time, "+00:00") {
			t.Errorf("time %q is not ISO 8601 in UTC as NodeWright writes it", e.Time)
		}
	}
	if hist.Current != "uninstalled" || strings.Join(versions, ",") != "uninstalled,2.0.0,1.0.0" {
		t.Errorf("history %+v; want uninstalled, 2.0.0, 1.0.0", hist)
	}
	runModes(t, p, "2.0.0", nil, "upgrade")
	if got := lines(root); got[0] != "args=x prev=uninstalled cur=2.0.0 sk=uninstalled,2.0.0" {
		t.Errorf("after an uninstall: %q", got)
	}

	// A history that is not JSON is moved aside; the previous version is
	// then empty, as with NodeWright.
	history := filepath.Join(root, "var/lib/skyhook/demo/history/tuning.json")
	if err := os.WriteFile(history, []byte("{broken"), 0o644); err != nil {
		t.Fatal(err)
	}
	runModes(t, p, "2.0.0", nil, "upgrade")
	if got := lines(root); got[0] != "args=x prev= cur=2.0.0 sk=,2.0.0" {
		t.Errorf("with a broken history: %q", got)
	}
	if data, err := os.ReadFile(history + ".backup"); err != nil || string(data) != "{broken" {
		t.Errorf("the broken history was not kept as .backup: %q, %v", data, err)
	}
}

// Steps run with the package copy as working directory, and see
// SKYHOOK_RESOURCE_ID (<skyhook>-<generation>_<package>_<version> unless
// the pod sets one).
func TestStepWorkingDirectoryAndResourceID(t *testing.T) {
	root := newRoot(t)
	conf := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "config":[{"name":"where","path":"where.sh"}],"config-check":[{"name":"where","path":"where.sh"}]}}`
	p := newPackage(t, root, "1.0.0", conf, map[string]string{"where.sh": "echo \"$(pwd) $SKYHOOK_RESOURCE_ID\" >> /tmp/where\n"}, nil)
	runModes(t, p, "1.0.0", nil, "config")
	runModes(t, p, "1.0.0", func(o *Options) { o.Env = append(o.Env, "SKYHOOK_RESOURCE_ID=demo-uid-3_tuning_1.0.0") }, "config-check")
	want := "/var/lib/skyhook/demo/tuning/1.0.0/1 demo-1_tuning_1.0.0\n/var/lib/skyhook/demo/tuning/1.0.0/1 demo-uid-3_tuning_1.0.0\n"
	if got := read(t, root, "tmp/where"); got != want {
		t.Errorf("steps saw\n%swant\n%s", got, want)
	}
}

// expected_config_files: a mode other than the uninstall ones fails before
// any step runs when one is missing from the configMap, naming it.
func TestExpectedConfigFiles(t *testing.T) {
	root := newRoot(t)
	conf := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","expected_config_files":["settings.conf","missing.conf"],"modes":{
 "apply":[{"name":"a","path":"count.sh","arguments":["apply"]}],"apply-check":[{"name":"a","path":"count.sh","arguments":["apply-check"]}],
 "uninstall":[{"name":"a","path":"count.sh","arguments":["uninstall"]}],"uninstall-check":[{"name":"a","path":"count.sh","arguments":["uninstall-check"]}]}}`
	p := newPackage(t, root, "1.0.0", conf, onceScripts, nil)
	for _, mode := range []string{"apply", "apply-check"} {
		var out bytes.Buffer
		_, err := Run(context.Background(), options(p, mode, "1.0.0", "1", &out))
		if err == nil || !strings.Contains(err.Error(), `expected config file "missing.conf"`) ||
			!strings.Contains(err.Error(), "/var/lib/skyhook/demo/tuning/1.0.0/1/configmaps/missing.conf") {
			t.Errorf("%s: %v; want the missing file named", mode, err)
		}
	}
	runModes(t, p, "1.0.0", nil, "uninstall", "uninstall-check")
	if got := counts(t, root); !equalCounts(got, map[string]int{"uninstall": 1, "uninstall-check": 1}) {
		t.Errorf("steps that ran: %v; want only the uninstall modes'", got)
	}
	runModes(t, p, "1.0.0", func(o *Options) {
		_ = os.WriteFile(filepath.Join(o.ConfigMapDir, "missing.conf"), []byte("x"), 0o644)
	}, "apply")
	if got := counts(t, root)["apply"]; got != 1 {
		t.Errorf("apply with every expected file: %d runs", got)
	}
}

// COPY_RESOLV: the pod's resolv.conf is copied over the host's, through a
// symlink followed inside the host root; without it the host's is kept.
func TestCopyResolvConf(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", onceConfig, onceScripts, nil)
	pod := filepath.Join(t.TempDir(), "resolv.conf")
	if err := os.WriteFile(pod, []byte("nameserver 10.0.0.10\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "resolv.conf"), []byte("nameserver 127.0.0.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	runModes(t, p, "1.0.0", nil, "config")
	if got := read(t, root, "etc/resolv.conf"); got != "nameserver 127.0.0.53\n" {
		t.Errorf("without COPY_RESOLV the host's resolv.conf became %q", got)
	}
	runModes(t, p, "1.0.0", func(o *Options) { o.ResolvConf = pod }, "config")
	if got := read(t, root, "etc/resolv.conf"); got != "nameserver 10.0.0.10\n" {
		t.Errorf("host resolv.conf %q, want the pod's", got)
	}
	// systemd-resolved's layout: an absolute symlink, read in the host root.
	if err := os.MkdirAll(filepath.Join(root, "run", "systemd", "resolve"), 0o755); err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(filepath.Join(root, "etc", "resolv.conf"))
	if err := os.Symlink("/run/systemd/resolve/stub-resolv.conf", filepath.Join(root, "etc", "resolv.conf")); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	o := options(p, "interrupt", "1.0.0", "1", &out)
	o.ResolvConf, o.Interrupt = pod, `{"type":"noop"}`
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "run/systemd/resolve/stub-resolv.conf"); got != "nameserver 10.0.0.10\n" {
		t.Errorf("the symlink's target on the host holds %q", got)
	}
}

// Output lines longer than the limit are written in pieces; a line far
// longer than any buffer does not stall the step.
func TestLongOutputLines(t *testing.T) {
	root := newRoot(t)
	conf := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "config":[{"name":"long","path":"long.sh"}],"config-check":[{"name":"long","path":"long.sh"}]}}`
	// 3000 bytes of "a" on one line, then 4 MiB of "b" with no newline.
	script := `s=aaaaaaaaaa; s=$s$s$s$s$s$s$s$s$s$s; s=$s$s$s; s=$s$s$s$s$s$s$s$s$s$s; echo "$s"
b=bbbbbbbbbbbbbbbb; i=0; while [ $i -lt 18 ]; do b=$b$b; i=$((i+1)); done; printf %s "$b"
echo done >&2
`
	p := newPackage(t, root, "1.0.0", conf, map[string]string{"long.sh": script}, nil)
	var out bytes.Buffer
	o := options(p, "config", "1.0.0", "1", &out)
	o.OutputLimit = 1024
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatalf("config: %v", err)
	}
	var as, bs []int
	for _, l := range strings.Split(out.String(), "\n") {
		_, text, ok := strings.Cut(l, "[long] stdout: ")
		switch {
		case !ok:
		case strings.HasPrefix(text, "a"):
			as = append(as, len(text))
		case strings.HasPrefix(text, "b"):
			bs = append(bs, len(text))
		}
	}
	if len(as) != 3 || as[0] != 1024 || as[2] != 3000-2048 {
		t.Errorf("the 3000-byte line came out as %v, want 1024, 1024, 952", as)
	}
	total := 0
	for _, n := range bs {
		total += n
	}
	if total != 4<<20 || len(bs) != 4096 {
		t.Errorf("the 4 MiB line came out as %d pieces, %d bytes", len(bs), total)
	}
	if !strings.Contains(out.String(), "[long] stderr: done") {
		t.Error("stderr after the long output is missing")
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// NodeWright v0.17 mounts the configMap key by key so that files the
// package image ships under /skyhook-package/configmaps stay visible
// (NodeWright issue #208). Here the copy container copies the image's
// /skyhook-package (baked configmaps included) and the agent lays the
// mounted ConfigMap over it, so the steps see both: the image's files,
// and the ConfigMap's keys winning where a name is in both.
func TestConfigMapKeysBesideTheImagesFiles(t *testing.T) {
	root := newRoot(t)
	conf := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "apply":[{"name":"list","path":"list.sh"}],"apply-check":[{"name":"list","path":"list.sh"}]}}`
	p := newPackage(t, root, "1.0.0", conf, map[string]string{
		"list.sh": `for f in baked.sh settings.conf; do echo "$f=$(cat "$SKYHOOK_DIR/configmaps/$f")"; done > /tmp/seen` + "\n",
	}, nil)
	baked := filepath.Join(p.copyDir, "configmaps")
	if err := os.MkdirAll(baked, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{"baked.sh": "from-image", "settings.conf": "image-default"} {
		if err := os.WriteFile(filepath.Join(baked, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runModes(t, p, "1.0.0", func(o *Options) {
		o.ConfigMapDir = configMapVolume(t, root, map[string]string{"settings.conf": "from-configmap"})
	}, "apply")
	if got, want := read(t, root, "tmp/seen"), "baked.sh=from-image\nsettings.conf=from-configmap\n"; got != want {
		t.Errorf("the step saw\n%s\nwant\n%s", got, want)
	}
}

// configMapVolume lays out a ConfigMap volume the way the kubelet writes
// one: each key a symlink through ..data to a timestamped directory.
func configMapVolume(t *testing.T, root string, data map[string]string) string {
	t.Helper()
	dir := filepath.Join(root, "..", "configmap-volume")
	stamped := filepath.Join(dir, "..2026_11_26_10_00_00.000000001")
	if err := os.MkdirAll(stamped, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Base(stamped), filepath.Join(dir, "..data")); err != nil {
		t.Fatal(err)
	}
	for key, value := range data {
		if err := os.WriteFile(filepath.Join(stamped, key), []byte(value), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..data", key), filepath.Join(dir, key)); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A step file without the execute bits runs, as under NodeWright's agent,
// which adds them before it runs a step; a set-ID bit the package shipped
// is dropped.
func TestStepsWithoutExecuteBitsRun(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", onceConfig, onceScripts, nil)
	step := filepath.Join(p.copyDir, "skyhook_dir", "count.sh")
	if err := os.Chmod(step, 0o640|os.ModeSetuid); err != nil {
		t.Fatal(err)
	}
	runModes(t, p, "1.0.0", nil, "apply")
	if got := counts(t, root); got["apply"] != 1 || got["apply-always"] != 1 {
		t.Errorf("steps that ran: %v; want apply's two", got)
	}
	info, err := os.Stat(step)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode() != 0o751 {
		t.Errorf("step file mode %v, want -rwxr-x--x (execute bits added, set-ID dropped)", info.Mode())
	}
}

// A warning about the agent's options (a setting ignored) is the first
// line of the pod log, before the steps' output.
func TestWarningsComeFirstInThePodLog(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", onceConfig, onceScripts, nil)
	var out bytes.Buffer
	o := options(p, "apply", "1.0.0", "1", &out)
	o.Warnings = []string{`SKYHOOK_AGENT_BUFFER_LIMIT="8k" ignored`}
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if !strings.HasSuffix(first, `[agent] warning: SKYHOOK_AGENT_BUFFER_LIMIT="8k" ignored`) {
		t.Errorf("first log line %q; the log:\n%s", first, out.String())
	}
}
