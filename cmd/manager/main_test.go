package main

import (
	"errors"
	"math"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/reconcile"
)

// --version prints the version the build stamped (config/images stamps
// it; its test runs the built binary with --version).
func TestVersionLine(t *testing.T) {
	defer func(v string) { operator.Version = v }(operator.Version)
	operator.Version = "1.2.3-test"
	if got := versionLine(); got != "skyhook-operator 1.2.3-test" {
		t.Errorf("versionLine() = %q", got)
	}
	operator.Version = ""
	if got := versionLine(); got != "skyhook-operator devel" {
		t.Errorf("unstamped: versionLine() = %q, want the work tree's devel", got)
	}
}

func TestDefaultResourcesAllOrNone(t *testing.T) {
	if r, err := defaultResources("", "", "", ""); r != nil || err != nil {
		t.Fatalf("none set: %v, %v; want nothing", r, err)
	}
	r, err := defaultResources("100m", "1", "64Mi", "256Mi")
	if err != nil || r.CPULimit.String() != "1" || r.MemoryRequest.String() != "64Mi" {
		t.Fatalf("all set: %+v, %v", r, err)
	}
	if _, err := defaultResources("100m", "", "", ""); err == nil || !strings.Contains(err.Error(), "set all four") {
		t.Fatalf("one set: %v; want the all-or-none rule", err)
	}
	if _, err := defaultResources("lots", "1", "1Mi", "1Mi"); err == nil || !strings.Contains(err.Error(), "--default-cpu-request") {
		t.Fatalf("bad quantity: %v; want the flag named", err)
	}
}

func TestParseTaint(t *testing.T) {
	got, err := parseTaint("example.com/runtime=pending:NoExecute")
	if err != nil || got.Key != "example.com/runtime" || got.Value != "pending" || got.Effect != "NoExecute" {
		t.Fatalf("%+v, %v", got, err)
	}
	if got, err := parseTaint("gpu-setup:NoSchedule"); err != nil || got.Value != "" {
		t.Fatalf("no value: %+v, %v", got, err)
	}
	if got, err := parseTaint(""); err != nil || got.Key != "" {
		t.Fatalf("empty (each kind's own): %+v, %v", got, err)
	}
	long := strings.Repeat("k", 54) + ":NoSchedule"
	for _, bad := range []string{"no-effect", "k=v:Sometimes", "bad key=v:NoSchedule", "k=bad value:NoSchedule", long} {
		if _, err := parseTaint(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestSplitListDropsBlanks(t *testing.T) {
	if got := splitList(" nvcr, ,mirror ,"); strings.Join(got, "|") != "nvcr|mirror" {
		t.Fatalf("splitList = %q, want [nvcr mirror]", got)
	}
	if got := splitList(""); got != nil {
		t.Fatalf("splitList of nothing = %q, want none", got)
	}
}

// NodeWright's JOB_STAGE_TIMEOUT and JOB_BACKOFF_LIMIT, as its chart sets
// them: 0 is no stage timeout, the limit counts the tries after the first.
func TestRetryLimits(t *testing.T) {
	var opts operator.Options
	if err := retryLimits(&opts, "90m", "3"); err != nil || opts.StageTimeout != 90*time.Minute || opts.MaxAttempts != 4 {
		t.Errorf("90m, 3: %v, %s, %d", err, opts.StageTimeout, opts.MaxAttempts)
	}
	if err := retryLimits(&opts, "0", "0"); err != nil || opts.StageTimeout != reconcile.NoStageTimeout || opts.MaxAttempts != 1 {
		t.Errorf("0, 0: %v, %s, %d", err, opts.StageTimeout, opts.MaxAttempts)
	}
	for _, bad := range [][2]string{{"-1m", "3"}, {"soon", "3"}, {"1h", "-1"}, {"1h", "three"}, {"1h", "1000"}} {
		if err := retryLimits(&opts, bad[0], bad[1]); err == nil || (!strings.Contains(err.Error(), "JOB_STAGE_TIMEOUT") && !strings.Contains(err.Error(), "JOB_BACKOFF_LIMIT")) {
			t.Errorf("%v: %v, want an error naming the setting", bad, err)
		}
	}
}

// --reapply-on-reboot takes what strconv reads as a boolean, as NodeWright's
// REAPPLY_ON_REBOOT env value, and names the flag and env otherwise.
func TestParseBool(t *testing.T) {
	for value, want := range map[string]bool{"true": true, "false": false, "1": true, "0": false, "TRUE": true} {
		if got, err := parseBool("--reapply-on-reboot (REAPPLY_ON_REBOOT)", value); err != nil || got != want {
			t.Errorf("parseBool(%q) = %v, %v; want %v", value, got, err, want)
		}
	}
	if _, err := parseBool("--reapply-on-reboot (REAPPLY_ON_REBOOT)", "yes"); err == nil || err.Error() != `--reapply-on-reboot (REAPPLY_ON_REBOOT) "yes": want true or false` {
		t.Errorf("parseBool(yes): %v", err)
	}
}

// runMainEnv makes the test binary run the operator's main instead of the
// tests, so that a test can run the command as a process: its flags and
// environment as a Deployment gives them, and its exit code.
const runMainEnv = "SKYHOOK_TEST_RUN_MAIN"

func TestMain(m *testing.M) {
	if os.Getenv(runMainEnv) == "1" {
		main()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// The operator reads PUBLISH_LEGACY_METRICS from its environment, as
// NodeWright's chart sets it, as the default of --publish-legacy-metrics,
// and the flag wins over it. A bad value stops it at start with exit code
// 2, naming the setting and the value; a good one gets past the check (to
// the kubeconfig, which is missing here: exit code 1).
func TestPublishLegacyMetricsFromTheEnvironment(t *testing.T) {
	for _, c := range []struct {
		env  string
		args []string
		code int
		says string
	}{
		{"maybe", nil, 2, `PUBLISH_LEGACY_METRICS) "maybe"`},
		{"false", []string{"--publish-legacy-metrics=sometimes"}, 2, `PUBLISH_LEGACY_METRICS) "sometimes"`},
		{"maybe", []string{"--publish-legacy-metrics=false"}, 1, ""},
		{"false", nil, 1, ""},
	} {
		cmd := exec.Command(os.Args[0], c.args...)
		cmd.Env = append(os.Environ(), runMainEnv+"=1", "PUBLISH_LEGACY_METRICS="+c.env,
			"KUBECONFIG="+t.TempDir()+"/none", "KUBERNETES_SERVICE_HOST=", "HOME="+t.TempDir())
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != c.code || !strings.Contains(string(out), c.says) {
			t.Errorf("PUBLISH_LEGACY_METRICS=%s %v: %v, want exit code %d saying %q; output:\n%s", c.env, c.args, err, c.code, c.says, out)
		}
		if c.code != 2 && strings.Contains(string(out), "publish-legacy-metrics") {
			t.Errorf("PUBLISH_LEGACY_METRICS=%s %v was refused:\n%s", c.env, c.args, out)
		}
	}
}

// --package-runs was removed; a deployment that still sets it starts (to
// the missing kubeconfig here: exit code 1) with a warning that names it.
func TestRemovedPackageRunsFlagOnlyWarns(t *testing.T) {
	cmd := exec.Command(os.Args[0], "--package-runs")
	cmd.Env = append(os.Environ(), runMainEnv+"=1", "KUBECONFIG="+t.TempDir()+"/none", "KUBERNETES_SERVICE_HOST=", "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(out), "warning: --package-runs was removed and does nothing") {
		t.Errorf("--package-runs: %v, want exit code 1 (past the flags) with the warning; output:\n%s", err, out)
	}
}

// The chart's selector-migration hook passes the selector it renders as
// key=value,...; an empty or malformed one is refused rather than read as a
// selector that matches nothing (which would delete the Deployment).
func TestParseSelector(t *testing.T) {
	got, err := parseSelector("app.kubernetes.io/name=skyhook-operator,app.kubernetes.io/instance=rel,control-plane=controller-manager")
	if err != nil || len(got) != 3 || got["control-plane"] != "controller-manager" {
		t.Fatalf("%v, %v", got, err)
	}
	for _, bad := range []string{"", " , ", "control-plane", "=x"} {
		if _, err := parseSelector(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// --ttl-succeeded and --ttl-failed take 0 or at least a minute, as
// NodeWright's JOB_TTL_* (which it refuses below 1m), naming the flag.
func TestKeepTTLs(t *testing.T) {
	var opts operator.Options
	if err := keepTTLs(&opts, "1h", "0"); err != nil || opts.SucceededTTL != time.Hour || opts.FailedTTL != 0 {
		t.Errorf("1h, 0: %v, %v, %v", opts.SucceededTTL, opts.FailedTTL, err)
	}
	for _, bad := range [][2]string{{"30s", "24h"}, {"1h", "-1h"}, {"1h", "a day"}} {
		if err := keepTTLs(&opts, bad[0], bad[1]); err == nil || !strings.Contains(err.Error(), "at least 1m") {
			t.Errorf("%v: %v, want a refusal", bad, err)
		}
	}
	if err := keepTTLs(&opts, "30s", "24h"); err == nil || !strings.HasPrefix(err.Error(), `--ttl-succeeded (JOB_TTL_SUCCEEDED) "30s"`) {
		t.Errorf("the refusal does not name the flag: %v", err)
	}
}

// The runtime's soft memory limit is 90% of the container's limit; a
// GOMEMLIMIT in the environment wins over it, and a provider that finds no
// limit leaves none.
func TestMemoryLimitFromTheContainer(t *testing.T) {
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(-1))
	t.Setenv("AUTOMEMLIMIT", "") // the library's own switch, not this test's
	os.Unsetenv("AUTOMEMLIMIT")
	if _, set := os.LookupEnv("GOMEMLIMIT"); set {
		t.Skip("GOMEMLIMIT is set in the test's environment: it would win")
	}
	container := func() (uint64, error) { return 500 << 20, nil }
	limit, err := setMemoryLimit(container)
	if err != nil || limit != 450<<20 {
		t.Fatalf("a 500 MiB container: limit %d, %v; want 450 MiB", limit, err)
	}
	if got := debug.SetMemoryLimit(-1); got != 450<<20 {
		t.Fatalf("the runtime's limit is %d, want 450 MiB", got)
	}

	none := func() (uint64, error) { return 0, memlimit.ErrNoLimit }
	if limit, err := setMemoryLimit(none); err != nil || limit != math.MaxInt64 {
		t.Errorf("no container limit: %d, %v; want none (MaxInt64)", limit, err)
	}

	t.Setenv("GOMEMLIMIT", "123MiB")
	debug.SetMemoryLimit(123 << 20) // what the runtime read from it at start
	if limit, err := setMemoryLimit(container); err != nil || limit != 123<<20 {
		t.Errorf("with GOMEMLIMIT=123MiB: %d, %v; want the environment's limit kept", limit, err)
	}
}
