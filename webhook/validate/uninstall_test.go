package validate

import (
	"errors"
	"strings"
	"testing"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

func withPackage(version string, uninstall *skyhookv1.Uninstall) *skyhookv1.Skyhook {
	return &skyhookv1.Skyhook{Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{
		"tuning": {PackageRef: skyhookv1.PackageRef{Name: "tuning", Version: version}, Image: "ghcr.io/x/tuning", Uninstall: uninstall},
	}}}
}

func without() *skyhookv1.Skyhook { return &skyhookv1.Skyhook{} }

func TestSkyhookUpdateGatesUninstall(t *testing.T) {
	enabled := &skyhookv1.Uninstall{Enabled: true}
	applied := &skyhookv1.Uninstall{Enabled: true, Apply: true}
	nowhere := func(string, string) (bool, error) { return false, nil }
	somewhere := func(string, string) (bool, error) { return true, nil }
	broken := func(string, string) (bool, error) { return false, errors.New("node n1: unreadable") }
	cases := []struct {
		name      string
		old, new  *skyhookv1.Skyhook
		recorded  Recorded
		wantErr   string
		wantWarns int
	}{
		{"removing a package without uninstall support", withPackage("1.0.0", nil), without(), somewhere, "", 0},
		{"removing an enabled package not uninstalled", withPackage("1.0.0", enabled), without(), nowhere, "spec.packages.tuning: Forbidden: the package declares uninstall support (uninstall.enabled=true) and has not been uninstalled", 0},
		{"removing one still uninstalling", withPackage("1.0.0", applied), without(), somewhere, "is still being uninstalled from some nodes", 0},
		{"removing one uninstalled everywhere", withPackage("1.0.0", applied), without(), nowhere, "", 0},
		{"removing when nodes cannot be read", withPackage("1.0.0", applied), without(), broken, "cannot be checked: node n1: unreadable", 0},
		{"downgrading an enabled package not uninstalled", withPackage("2.0.0", enabled), withPackage("1.0.0", enabled), nowhere, "spec.packages.tuning.version: Forbidden: lowering 2.0.0 to 1.0.0", 0},
		{"downgrading one uninstalled everywhere", withPackage("2.0.0", applied), withPackage("1.0.0", nil), nowhere, "", 0},
		{"downgrading without uninstall support", withPackage("2.0.0", nil), withPackage("1.0.0", nil), somewhere, "", 0},
		{"upgrading is never gated", withPackage("1.0.0", enabled), withPackage("2.0.0", enabled), somewhere, "", 0},
		{"cancelling warns", withPackage("1.0.0", applied), withPackage("1.0.0", enabled), somewhere, "", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			errs, warnings := SkyhookUpdate(tc.old, tc.new, tc.recorded)
			switch {
			case tc.wantErr == "" && len(errs) > 0:
				t.Fatalf("refused: %v", errs)
			case tc.wantErr != "" && (len(errs) != 1 || !strings.Contains(errs[0].Error(), tc.wantErr)):
				t.Fatalf("errors %v, want one containing %q", errs, tc.wantErr)
			}
			if len(warnings) != tc.wantWarns {
				t.Fatalf("warnings %q, want %d", warnings, tc.wantWarns)
			}
		})
	}
}
