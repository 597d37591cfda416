package main

import (
	"strings"
	"testing"
	"time"

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
