package packageset

import (
	"fmt"
	"strings"
	"testing"
)

func TestSummarizeKeepsTheMessageUnderTheConditionLimit(t *testing.T) {
	few := []string{"a.yaml: Skyhook/a: spec.packages: Required value", "b.yaml: not YAML"}
	if got, want := summarize(few), strings.Join(few, "; "); got != want {
		t.Errorf("summarize(%q) = %q, want %q", few, got, want)
	}
	var many []string
	for i := range 5000 {
		many = append(many, fmt.Sprintf("sets/bad-%04d.yaml: Skyhook/bad-%04d: spec.packages.tuning.version: Invalid value: \"x\": not a semantic version", i, i))
	}
	got := summarize(many)
	if len(got) > problemsBudget+64 {
		t.Errorf("%d bytes for 5000 problems, want at most about %d", len(got), problemsBudget)
	}
	if !strings.HasPrefix(got, many[0]) || !strings.Contains(got, " more") {
		t.Errorf("want the first problems and how many more: ...%s", got[len(got)-60:])
	}
	if huge := summarize([]string{strings.Repeat("x", 100<<10)}); len(huge) > problemsBudget+8 {
		t.Errorf("one huge problem gives %d bytes", len(huge))
	}
}
