package main

import (
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
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
	for _, bad := range []string{"no-effect", "k=v:Sometimes", "bad key=v:NoSchedule", "k=bad value:NoSchedule"} {
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
