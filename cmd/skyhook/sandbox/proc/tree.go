package proc

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// What follows reads Linux's /proc; elsewhere there is none, and it finds
// no process.

// Tree maps each pid to its children's, as /proc showed them when it was
// read.
type Tree map[int][]int

// ReadTree reads every process's parent from /proc/<pid>/stat.
func ReadTree() Tree {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := Tree{}
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The parent's pid is the second field after the parenthesised
		// command name (which may hold spaces and parentheses).
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		ppid, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	return children
}

// Descendants lists the processes below pid, children before their own.
func (t Tree) Descendants(pid int) []int {
	var out []int
	for _, c := range t[pid] {
		out = append(out, c)
		out = append(out, t.Descendants(c)...)
	}
	return out
}

// Descendants lists the processes below pid, children before their own
// (a test checks that a pod's containers went with their shim).
func Descendants(pid int) []int { return ReadTree().Descendants(pid) }

// Naming lists the running processes, other than this one, whose command
// line contains any of words, as "pid: command line": what a test checks
// is gone after Stop or `sandbox down`.
func Naming(words ...string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := strconv.Itoa(os.Getpid())
	var found []string
	for _, f := range cmdlines {
		pid := filepath.Base(filepath.Dir(f))
		data, err := os.ReadFile(f)
		if err != nil || pid == self {
			continue
		}
		line := strings.ReplaceAll(string(data), "\x00", " ")
		for _, w := range words {
			if strings.Contains(line, w) {
				found = append(found, pid+": "+line)
				break
			}
		}
	}
	return found
}
