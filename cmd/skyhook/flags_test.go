package main

import (
	"strings"
	"testing"
)

// -o is checked before any command runs, case-insensitively; a command
// that changes something without a preview refuses --dry-run rather than
// go ahead.
func TestGlobalFlags(t *testing.T) {
	if _, err := run(t, "-o", "xml", "version", "--client"); err == nil || err.Error() != `invalid output format "xml": --output takes table, wide, json, yaml` {
		t.Errorf("-o xml: %v", err)
	}
	if out, err := run(t, "-o", "YAML", "version", "--client"); err != nil || !strings.HasPrefix(out, "client: ") {
		t.Errorf("-o YAML: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"sandbox", "down"}, {"reconcile", "skyhook", "x"}, {"push", "dir", "oci://example/x:1"}} {
		if _, err := run(t, append([]string{"--dry-run"}, args...)...); err == nil || !strings.Contains(err.Error(), "cannot preview its changes") {
			t.Errorf("--dry-run %v: %v", args, err)
		}
	}
	if _, err := run(t, "--dry-run", "plan", "-o", "wide", "x"); err == nil || err.Error() != `invalid output format "wide": skyhook plan takes --output table, json` {
		t.Errorf("plan -o wide: %v", err)
	}
}
