package run

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

const config = `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{
 "apply":[
   {"name":"write","path":"write.sh","arguments":["env:GREETING","plain"],"env":{"STEP_VAR":"from-step"}},
   {"name":"once","path":"once.sh","idempotence":false},
   {"name":"custom","path":"exit3.sh","returncodes":[0,3]}],
 "apply-check":[{"name":"check-file","path":"check.sh"}],
 "config":[{"name":"fail","path":"fail.sh"},{"name":"after","path":"after.sh"}],
 "config-check":[{"name":"bad1","path":"fail.sh"},{"name":"good","path":"check.sh"},{"name":"bad2","path":"fail.sh"}],
 "upgrade":[{"name":"migrate","path":"migrate.sh","upgrade_step":true}],
 "upgrade-check":[{"name":"check-file","path":"check.sh"}]}}`

var scripts = map[string]string{
	// Inside the chroot: the host root is /, the package at $SKYHOOK_DIR.
	"write.sh": `echo "greeting=$1 second=$2 step=$STEP_VAR pod=$POD_VAR dir=$SKYHOOK_DIR root=$STEP_ROOT" > /tmp/write.out
cat "$SKYHOOK_DIR/configmaps/settings.conf" > /tmp/configmap.out
cat "$SKYHOOK_DIR/node-metadata/labels.json" > /tmp/labels.out
echo to-stdout; echo to-stderr >&2
`,
	"once.sh":    "echo ran >> /tmp/once.count\n",
	"exit3.sh":   "exit 3\n",
	"check.sh":   "test -f /etc/tuning.conf\n",
	"fail.sh":    "echo failing; exit 7\n",
	"after.sh":   "touch /tmp/after.ran\n",
	"migrate.sh": `echo "args=$1,$2 env=$SKYHOOK_PREVIOUS_VERSION,$SKYHOOK_CURRENT_VERSION nodewright=$PREVIOUS_VERSION,$CURRENT_VERSION" > /tmp/migrate.out` + "\n",
}

func options(p pkg, mode, version, generation string, out *bytes.Buffer) Options {
	configMaps := filepath.Join(p.root, "..", "configmap-mount")
	_ = os.MkdirAll(configMaps, 0o755)
	_ = os.WriteFile(filepath.Join(configMaps, "settings.conf"), []byte("mode=fast\n"), 0o644)
	return Options{Mode: mode, HostRoot: p.root, CopyDir: p.copyDir, ConfigMapDir: configMaps, NodeMetadataDir: downwardAPIVolume(p.root),
		Skyhook: "demo", Package: "tuning", Version: version, Generation: generation,
		Env: []string{"PATH=/bin:/usr/bin", "GREETING=hello", "POD_VAR=from-pod"}, Out: out, KeepLogs: 2}
}

// downwardAPIVolume lays out node-metadata files the way the kubelet
// writes a downward API volume: each file a symlink through ..data to a
// timestamped directory.
func downwardAPIVolume(root string) string {
	dir := filepath.Join(root, "..", "node-metadata-mount")
	data := filepath.Join(dir, "..2026_11_21_10_00_00.000000001")
	_ = os.MkdirAll(data, 0o755)
	_ = os.WriteFile(filepath.Join(data, "labels.json"), []byte(`{"kubernetes.io/hostname":"node-1"}`), 0o644)
	_ = os.Symlink(filepath.Base(data), filepath.Join(dir, "..data"))
	_ = os.Symlink("..data/labels.json", filepath.Join(dir, "labels.json"))
	return dir
}

func read(t *testing.T, root, path string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, path))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return string(data)
}

// apply runs its steps chrooted into the host root with the step's, the
// pod's and the package's environment, env: arguments expanded, custom
// return codes, the configMap visible and root_dir copied; its check passes;
// output lines are stamped with the step and stream.
func TestApplyAndCheckRunStepsInTheHostRoot(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, map[string]string{"etc/tuning.conf": "x=1\n"})
	var out bytes.Buffer
	results, err := Run(context.Background(), options(p, "apply", "1.0.0", "1", &out))
	if err != nil {
		t.Fatalf("apply: %v\n%s", err, out.String())
	}
	if len(results) != 3 || results[2].ExitCode != 3 || !results[2].OK {
		t.Errorf("results %+v; want three steps, the last exiting 3 and accepted", results)
	}
	want := "greeting=hello second=plain step=from-step pod=from-pod dir=/var/lib/skyhook/demo/tuning/1.0.0/1 root=/var/lib/skyhook/demo/tuning/1.0.0/1/skyhook_dir\n"
	if got := read(t, root, "tmp/write.out"); got != want {
		t.Errorf("the step saw\n %q\nwant\n %q", got, want)
	}
	if got := read(t, root, "tmp/configmap.out"); got != "mode=fast\n" {
		t.Errorf("configMap as the step read it: %q", got)
	}
	if got := read(t, root, "tmp/labels.out"); got != `{"kubernetes.io/hostname":"node-1"}` {
		t.Errorf("node-metadata/labels.json as the step read it: %q", got)
	}
	if read(t, root, "etc/tuning.conf") != "x=1\n" {
		t.Error("root_dir was not copied over the host root")
	}
	for _, want := range []string{"[write] stdout: to-stdout", "[write] stderr: to-stderr"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("pod log lacks %q:\n%s", want, out.String())
		}
	}
	if _, err := Run(context.Background(), options(p, "apply-check", "1.0.0", "1", &out)); err != nil {
		t.Errorf("apply-check: %v", err)
	}
	hist := History{}
	if err := json.Unmarshal([]byte(read(t, root, "var/lib/skyhook/demo/history/tuning.json")), &hist); err != nil || hist.Current != "1.0.0" {
		t.Errorf("history %+v, %v; want 1.0.0 current", hist, err)
	}
}

// An action mode stops at its first failing step and reports its exit
// code; a check mode runs every check and reports all that failed.
func TestFailuresStopActionsButNotChecks(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, map[string]string{"etc/tuning.conf": "x=1\n"})
	var out bytes.Buffer
	results, err := Run(context.Background(), options(p, "config", "1.0.0", "1", &out))
	if err == nil || !strings.Contains(err.Error(), "step fail exited with code 7") {
		t.Fatalf("config: %v; want the failing step and its exit code", err)
	}
	if len(results) != 1 {
		t.Errorf("%d steps ran, want the mode to stop at the failing one", len(results))
	}
	if _, err := os.Stat(filepath.Join(root, "tmp", "after.ran")); err == nil {
		t.Error("the step after the failure ran")
	}
	results, err = Run(context.Background(), options(p, "config-check", "1.0.0", "1", &out))
	if err == nil || !strings.Contains(err.Error(), "step bad1 exited with code 7; step bad2 exited with code 7") || len(results) != 3 {
		t.Errorf("config-check: %v, %d results; want all three checks run and both failures reported", err, len(results))
	}
}

// A non-idempotent step runs once per package version, as NodeWright keeps
// it: a new generation of the Skyhook (any edit) does not run it again.
func TestNonIdempotentStepsRunOncePerVersion(t *testing.T) {
	root := newRoot(t)
	run := func(version, generation string) {
		t.Helper()
		p := newPackage(t, root, version, config, scripts, nil)
		var out bytes.Buffer
		if _, err := Run(context.Background(), options(p, "apply", version, generation, &out)); err != nil {
			t.Fatalf("apply %s/%s: %v\n%s", version, generation, err, out.String())
		}
	}
	run("1.0.0", "1")
	run("1.0.0", "1") // skipped
	if got := read(t, root, "tmp/once.count"); got != "ran\n" {
		t.Errorf("after two runs of one version: %q, want one run", got)
	}
	run("1.0.0", "2") // an edit of the Skyhook: skipped too
	if got := read(t, root, "tmp/once.count"); got != "ran\n" {
		t.Errorf("after a new generation of the same version: %q, want still one run", got)
	}
	run("1.1.0", "2") // a new version
	if got := strings.Count(read(t, root, "tmp/once.count"), "ran"); got != 2 {
		t.Errorf("%d runs, want 2 (first, new version)", got)
	}
}

// NodeWright's agent options SKYHOOK_ROOT_DIR and SKYHOOK_LOG_DIR (the
// binary passes them as StateDir and LogDir) move the flags, history and
// logs on the host.
func TestStateAndLogDirsCanMove(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, map[string]string{"etc/tuning.conf": "x=1\n"})
	var out bytes.Buffer
	for _, mode := range []string{"apply", "apply-check"} { // apply-check writes the history
		o := options(p, mode, "1.0.0", "1", &out)
		o.StateDir, o.LogDir = "/etc/skyhook", "/var/log/other"
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out.String())
		}
	}
	if _, err := os.Stat(filepath.Join(root, "etc/skyhook/demo/history/tuning.json")); err != nil {
		t.Errorf("no history under the state dir: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, "var/lib/skyhook/demo/history")); err == nil {
		t.Error("history written under the default state dir too")
	}
	if entries, err := os.ReadDir(filepath.Join(root, "var/log/other/demo/tuning/apply")); err != nil || len(entries) == 0 {
		t.Errorf("no step logs under the log dir: %v", err)
	}
}

// An upgrade step gets the previous and the current version, as arguments
// and in its environment (NodeWright's names and this project's); the
// history moves on after upgrade-check, as NodeWright's agent writes it.
func TestUpgradeStepsGetBothVersions(t *testing.T) {
	root := newRoot(t)
	var out bytes.Buffer
	old := newPackage(t, root, "1.0.0", config, scripts, map[string]string{"etc/tuning.conf": "x=1\n"})
	for _, mode := range []string{"apply", "apply-check"} {
		if _, err := Run(context.Background(), options(old, mode, "1.0.0", "1", &out)); err != nil {
			t.Fatalf("%s: %v\n%s", mode, err, out.String())
		}
	}
	next := newPackage(t, root, "2.0.0", config, scripts, nil)
	if _, err := Run(context.Background(), options(next, "upgrade", "2.0.0", "2", &out)); err != nil {
		t.Fatalf("upgrade: %v\n%s", err, out.String())
	}
	if got := read(t, root, "tmp/migrate.out"); got != "args=1.0.0,2.0.0 env=1.0.0,2.0.0 nodewright=1.0.0,2.0.0\n" {
		t.Errorf("the upgrade step saw %q", got)
	}
	var hist History
	_ = json.Unmarshal([]byte(read(t, root, "var/lib/skyhook/demo/history/tuning.json")), &hist)
	if hist.Current != "1.0.0" {
		t.Errorf("history %+v after upgrade; want 1.0.0 still current until upgrade-check", hist)
	}
	if _, err := Run(context.Background(), options(next, "upgrade-check", "2.0.0", "2", &out)); err != nil {
		t.Fatalf("upgrade-check: %v\n%s", err, out.String())
	}
	_ = json.Unmarshal([]byte(read(t, root, "var/lib/skyhook/demo/history/tuning.json")), &hist)
	if hist.Current != "2.0.0" || len(hist.History) != 2 || hist.History[0].Version != "2.0.0" || hist.History[1].Version != "1.0.0" {
		t.Errorf("history %+v; want 2.0.0 current, then 1.0.0", hist)
	}
}

// A missing env: variable fails the step with a message naming it; an
// unknown mode is an error.
func TestBadInvocationsFail(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, nil)
	var out bytes.Buffer
	o := options(p, "apply", "1.0.0", "1", &out)
	o.Env = []string{"PATH=/bin"}
	if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), `"env:GREETING", but GREETING is not set`) {
		t.Errorf("missing variable: %v", err)
	}
	if _, err := Run(context.Background(), options(p, "install", "1.0.0", "1", &out)); err == nil || !strings.Contains(err.Error(), `unknown mode "install"`) {
		t.Errorf("unknown mode: %v", err)
	}
}

// Interrupts run once per package and generation: a service interrupt
// reloads systemd and restarts each service; run again (the pod restarted)
// it does nothing; restartAllServices restarts what runs.
func TestInterruptsRunOncePerGeneration(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, nil)
	var out bytes.Buffer
	o := options(p, "interrupt", "1.0.0", "4", &out)
	o.Interrupt = `{"type":"service","services":["containerd","kubelet"]}`
	for range 2 {
		if _, err := Run(context.Background(), o); err != nil {
			t.Fatalf("interrupt: %v\n%s", err, out.String())
		}
	}
	if got := read(t, root, "var/log/systemctl.calls"); got != "daemon-reload\nrestart containerd\nrestart kubelet\n" {
		t.Errorf("systemctl calls:\n%s", got)
	}
	o.Generation, o.Interrupt = "5", `{"type":"restartAllServices"}`
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if got := read(t, root, "var/log/systemctl.calls"); !strings.HasSuffix(got, "daemon-reload\nrestart containerd.service\nrestart kubelet.service\n") {
		t.Errorf("restartAllServices calls:\n%s", got)
	}
	o.Generation, o.Interrupt = "6", `{"type":"reboot"}`
	if _, err := Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(context.Background(), o); err != nil { // the pod after the reboot
		t.Fatal(err)
	}
	if got := strings.Count(read(t, root, "var/log/systemctl.calls"), "reboot"); got != 1 {
		t.Errorf("%d reboots, want one", got)
	}
}

// Each run of a step writes a log file on the host; the newest KeepLogs
// stay; KeepLogs 0 writes none.
func TestStepLogsRotate(t *testing.T) {
	root := newRoot(t)
	p := newPackage(t, root, "1.0.0", config, scripts, nil)
	clock := time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)
	for i := range 3 {
		var out bytes.Buffer
		o := options(p, "apply-check", "1.0.0", "1", &out)
		o.Now = func() time.Time { return clock.Add(time.Duration(i) * time.Second) }
		_, _ = Run(context.Background(), o)
	}
	dir := filepath.Join(root, "var", "log", "skyhook", "demo", "tuning", "apply-check", "check-file")
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 2 || !strings.HasPrefix(entries[1].Name(), "20261121T100002") {
		t.Errorf("log files %v, %v; want the two newest runs", entries, err)
	}
	var out bytes.Buffer
	o := options(p, "apply-check", "1.0.0", "1", &out)
	o.KeepLogs = 0
	o.Now = func() time.Time { return clock.Add(time.Hour) }
	_, _ = Run(context.Background(), o)
	if entries, _ := os.ReadDir(dir); len(entries) != 2 {
		t.Errorf("KeepLogs 0 wrote a log: %d files", len(entries))
	}
}
