// Package modelog is the shape of a stage container's log when the agent
// runs several modes in one container (a stage, then its check): a marker
// line before each mode, so that a reader (`skyhook package logs --stage`,
// `--check`) can cut the log back into the modes' parts.
package modelog

import "strings"

// markerPrefix and markerSuffix frame a mode's name on a line of its own.
// Step output never starts with them: the agent prefixes every line a
// step writes with a timestamp.
const (
	markerPrefix = "=== skyhook-agent "
	markerSuffix = " ==="
)

// Marker is the line (without its newline) that starts a mode's part.
func Marker(mode string) string { return markerPrefix + mode + markerSuffix }

// Part is what one mode wrote; Mode is empty for text before any marker.
type Part struct {
	Mode string
	Text string
}

// Split cuts a log at its markers, in order. A log without markers is one
// part with no mode: the log of a container that ran one mode.
func Split(log string) []Part {
	var parts []Part
	current := Part{}
	var text strings.Builder
	flush := func() {
		if current.Mode != "" || text.Len() > 0 {
			current.Text = text.String()
			parts = append(parts, current)
		}
		text.Reset()
	}
	for _, line := range strings.SplitAfter(log, "\n") {
		if mode, ok := modeOf(strings.TrimRight(line, "\r\n")); ok {
			flush()
			current = Part{Mode: mode}
			continue
		}
		text.WriteString(line)
	}
	flush()
	return parts
}

// Of is what the mode wrote, and whether the log has its marker.
func Of(log, mode string) (string, bool) {
	for _, p := range Split(log) {
		if p.Mode == mode {
			return p.Text, true
		}
	}
	return "", false
}

func modeOf(line string) (string, bool) {
	if !strings.HasPrefix(line, markerPrefix) || !strings.HasSuffix(line, markerSuffix) {
		return "", false
	}
	mode := strings.TrimSuffix(strings.TrimPrefix(line, markerPrefix), markerSuffix)
	return mode, mode != "" && !strings.ContainsAny(mode, " \t")
}
