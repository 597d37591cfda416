package main

import (
	"slices"
	"strings"
	"testing"
)

// A node argument is a name, or a regular expression over the whole name
// when it has a regex character; several are OR-ed, the result sorted and
// without duplicates.
func TestMatchNodes(t *testing.T) {
	names := []string{"worker-2", "gpu-node-10", "worker-1", "my-worker-1", "gpu-node-1", "worker-10", "a.b"}
	for _, c := range []struct {
		patterns []string
		want     []string
	}{
		{[]string{"worker-1"}, []string{"worker-1"}},                                  // exact: not worker-10, not my-worker-1
		{[]string{"worker"}, []string{}},                                              // no prefix match without a regex character
		{[]string{"worker-.*"}, []string{"worker-1", "worker-10", "worker-2"}},        // anchored: not my-worker-1
		{[]string{"gpu-node-[0-9]+"}, []string{"gpu-node-1", "gpu-node-10"}},          // character class
		{[]string{"worker-1", "worker-1|worker-2"}, []string{"worker-1", "worker-2"}}, // alternation inside the anchors, deduplicated
		{[]string{"worker-2", "gpu-node-1"}, []string{"gpu-node-1", "worker-2"}},      // OR-ed, sorted
		{[]string{`a\.b`}, []string{"a.b"}},
		{[]string{"a.b"}, []string{"a.b"}}, // '.' makes it a regex that also matches the name itself
		{[]string{"missing", "nothing-.*"}, []string{}},
		{nil, []string{}},
	} {
		got, err := matchNodes(c.patterns, names)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("matchNodes(%q) = %q, %v; want %q", c.patterns, got, err, c.want)
		}
	}
	if _, err := matchNodes([]string{"worker-[0-9"}, names); err == nil || !strings.Contains(err.Error(), `invalid regex pattern "worker-[0-9"`) {
		t.Errorf("a broken pattern: %v", err)
	}
}
