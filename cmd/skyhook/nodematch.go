package main

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// patternChars are the characters that make a node argument a regular
// expression; an argument without any of them names one node exactly.
const patternChars = `.*+?^${}[]|()\`

// matchNodes returns the names that any of the patterns selects, sorted and
// without duplicates. A pattern with one of patternChars is a regular
// expression that must match the whole name (worker-.* selects worker-1,
// not my-worker-1); any other pattern is a node name.
func matchNodes(patterns, names []string) ([]string, error) {
	selected := map[string]bool{}
	for _, p := range patterns {
		if !strings.ContainsAny(p, patternChars) {
			if slices.Contains(names, p) {
				selected[p] = true
			}
			continue
		}
		re, err := regexp.Compile("^(?:" + p + ")$")
		if err != nil {
			return nil, fmt.Errorf("invalid regex pattern %q: %w", p, err)
		}
		for _, n := range names {
			if re.MatchString(n) {
				selected[n] = true
			}
		}
	}
	out := make([]string, 0, len(selected))
	for n := range selected {
		out = append(out, n)
	}
	slices.Sort(out)
	return out, nil
}

// noNodesMatched is what a command prints, exiting 0, when its node
// patterns select no node.
const noNodesMatched = "No nodes matched the specified patterns"
