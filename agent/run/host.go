package run

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// host is where a Skyhook keeps its records on the node.
type host struct {
	root    string
	skyhook string
	// state and logs are the state and log directories on the host.
	state, logs string
}

// path is a path inside the host root, as the agent sees it.
func (h host) path(parts ...string) string {
	return filepath.Join(append([]string{h.root}, parts...)...)
}

// flagPath is the run-once flag of a non-idempotent step for this package
// version, as NodeWright keeps it: an edit of the Skyhook (a new
// generation) does not run the step again; a new version does, and so do
// other arguments or return codes (the marker, as in NodeWright's flag
// names).
func (h host) flagPath(o Options, s pkgconfig.Step) string {
	sum := sha256.Sum256([]byte(fmt.Sprintf("%q_%v", s.Arguments, s.Returncodes)))
	return h.path(h.state, h.skyhook, "flags", o.Package, o.Version, o.Mode, s.Name+"_"+hex.EncodeToString(sum[:6]))
}

// History is a package's versions on the node.
type History struct {
	Current  string    `json:"current-version"`
	Previous []Version `json:"previous,omitempty"`
}

// Version is a version that was current until a time.
type Version struct {
	Version string    `json:"version"`
	Until   time.Time `json:"until"`
}

func (h host) historyPath(pkg string) string {
	return h.path(h.state, h.skyhook, "history", pkg+".json")
}

// history reads a package's history; none reads as empty.
func (h host) history(pkg string) History {
	var hist History
	if data, err := os.ReadFile(h.historyPath(pkg)); err == nil {
		_ = json.Unmarshal(data, &hist) // a broken history starts over
	}
	return hist
}

// recordVersion updates the history after a mode succeeded: apply and
// upgrade make the version current, uninstall ends it.
func (h host) recordVersion(o Options, cfg *pkgconfig.Config) error {
	hist := h.history(o.Package)
	switch o.Mode {
	case "apply", "upgrade":
		if hist.Current == o.Version {
			return nil
		}
		if hist.Current != "" {
			hist.Previous = append(hist.Previous, Version{Version: hist.Current, Until: o.Now().UTC()})
		}
		hist.Current = o.Version
	case "uninstall":
		if hist.Current != o.Version {
			return nil
		}
		hist.Previous = append(hist.Previous, Version{Version: hist.Current, Until: o.Now().UTC()})
		hist.Current = ""
	default:
		return nil
	}
	data, err := json.MarshalIndent(hist, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(h.historyPath(o.Package), append(data, '\n'))
}

// openLog opens the log file of this run of a step, and removes the oldest
// runs beyond KeepLogs; with KeepLogs 0 it writes nowhere.
func (h host) openLog(o Options, step string) (io.WriteCloser, error) {
	if o.KeepLogs <= 0 {
		return nopCloser{io.Discard}, nil
	}
	dir := h.path(h.logs, h.skyhook, o.Package, o.Mode, step)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	name := o.Now().UTC().Format("20060102T150405.000000000Z") + ".log"
	f, err := os.Create(filepath.Join(dir, name))
	if err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return f, nil
	}
	var logs []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".log") {
			logs = append(logs, e.Name())
		}
	}
	sort.Strings(logs) // names are times: oldest first
	for len(logs) > o.KeepLogs {
		_ = os.Remove(filepath.Join(dir, logs[0]))
		logs = logs[1:]
	}
	return f, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }

// writeFile writes a file, making its directory.
func writeFile(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o644)
}

// copyTree copies the files under src over dst, keeping their modes and
// symlinks; a missing src copies nothing.
func copyTree(src, dst string) error {
	if _, err := os.Stat(src); os.IsNotExist(err) {
		return nil
	}
	return filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		info, err := d.Info()
		if err != nil {
			return err
		}
		switch {
		case d.IsDir():
			return os.MkdirAll(target, info.Mode().Perm()|0o700)
		case info.Mode()&os.ModeSymlink != 0:
			link, err := os.Readlink(path)
			if err != nil {
				return err
			}
			_ = os.Remove(target)
			return os.Symlink(link, target)
		case !info.Mode().IsRegular():
			return nil // devices and sockets are not package content
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, data, info.Mode().Perm()); err != nil {
			return fmt.Errorf("writing %s: %w", target, err)
		}
		return os.Chmod(target, info.Mode().Perm())
	})
}
