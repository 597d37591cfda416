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
	return filepath.Join(h.flagDir(o), o.Mode, s.Name+"_"+hex.EncodeToString(sum[:6]))
}

// flagDir holds the run-once flags of the package version.
func (h host) flagDir(o Options) string {
	return h.path(h.state, h.skyhook, "flags", o.Package, o.Version)
}

// History is a package's versions on the node, in NodeWright's history
// file format: the current version ("uninstalled" after an uninstall) and
// each version with the time it became current, newest first.
type History struct {
	Current string         `json:"current-version"`
	History []HistoryEntry `json:"history"`
}

// HistoryEntry is one version and when it became current (ISO 8601, as
// NodeWright writes it).
type HistoryEntry struct {
	Version string `json:"version"`
	Time    string `json:"time"`
}

// Uninstalled is the current version that uninstall-check leaves, as in
// NodeWright's history; NoHistory is the previous version an upgrade step
// gets when the package has no history on the node.
const (
	Uninstalled = "uninstalled"
	NoHistory   = "unknown"
)

func (h host) historyPath(pkg string) string {
	return h.path(h.state, h.skyhook, "history", pkg+".json")
}

// history reads a package's history and whether it has one. A file that
// is not JSON is moved aside to <file>.backup and reads as an empty
// history, as NodeWright's agent does.
func (h host) history(pkg string) (History, bool) {
	hist := History{History: []HistoryEntry{}}
	path := h.historyPath(pkg)
	data, err := os.ReadFile(path)
	if err != nil {
		return hist, false
	}
	if err := json.Unmarshal(data, &hist); err != nil {
		_ = os.Rename(path, path+".backup")
		return History{History: []HistoryEntry{}}, true
	}
	if hist.History == nil {
		hist.History = []HistoryEntry{}
	}
	return hist, true
}

// previousVersion is the version the upgrade steps are told they upgrade
// from: the history's current version, "unknown" without a history.
func (h host) previousVersion(pkg string) string {
	hist, ok := h.history(pkg)
	if !ok {
		return NoHistory
	}
	return hist.Current
}

// recordVersion updates the history after a mode succeeded, as NodeWright's
// agent does: apply-check and upgrade-check make the package's version
// current, uninstall-check makes it "uninstalled" and removes the run-once
// flags of the version, so a later install runs every step again.
func (h host) recordVersion(o Options, cfg *pkgconfig.Config) error {
	version := cfg.PackageVersion
	switch o.Mode {
	case "apply-check", "upgrade-check":
	case "uninstall-check":
		version = Uninstalled
		if err := os.RemoveAll(h.flagDir(o)); err != nil {
			return fmt.Errorf("removing the run-once flags: %w", err)
		}
	default:
		return nil
	}
	hist, _ := h.history(o.Package)
	hist.Current = version
	entry := HistoryEntry{Version: version, Time: o.Now().UTC().Format("2006-01-02T15:04:05.000000-07:00")}
	hist.History = append([]HistoryEntry{entry}, hist.History...)
	data, err := json.MarshalIndent(hist, "", "  ")
	if err != nil {
		return err
	}
	return writeFile(h.historyPath(o.Package), append(data, '\n'))
}

// copyResolvConf copies the pod's resolv.conf over the host's
// /etc/resolv.conf; a symlink there (systemd-resolved's) is followed
// inside the host root, so the file it names on the host is written.
func copyResolvConf(src, hostRoot string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	dst, err := resolveInRoot(hostRoot, "/etc/resolv.conf")
	if err != nil {
		return err
	}
	return writeFile(dst, data)
}

// resolveInRoot follows the symlinks of a path inside root as a process
// chrooted there would, never leaving root; the last part need not exist.
func resolveInRoot(root, path string) (string, error) {
	current := "/"
	rest := strings.Split(strings.Trim(filepath.Clean(path), "/"), "/")
	for links := 0; len(rest) > 0; {
		part := rest[0]
		rest = rest[1:]
		next := filepath.Join(current, part) // Join cleans "..": it stops at "/"
		info, err := os.Lstat(filepath.Join(root, next))
		if err != nil || info.Mode()&os.ModeSymlink == 0 {
			current = next
			continue
		}
		if links++; links > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", path)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(current, target)
		}
		rest = append(strings.Split(strings.Trim(filepath.Clean(target), "/"), "/"), rest...)
		current = "/"
	}
	return filepath.Join(root, current), nil
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
//
// It writes durably: a temporary file beside path, flushed to the disk,
// renamed over path, then the directory flushed. A run-once flag, a
// history line or an interrupt record the agent wrote is then still there
// after the node loses power, so a step that completed is never run again
// and a torn write never leaves half a record. (google/renameio does the
// first three but not the directory's flush, which the rename needs to
// outlive a power cut; hence these lines.)
func writeFile(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // gone already once renamed
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Chmod(0o644)
	}
	if err == nil {
		err = tmp.Sync()
	}
	if closeErr := tmp.Close(); err == nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// copyTree copies the files under src over dst, keeping their modes and
// symlinks; a missing src copies nothing.
// copyPackage copies the package's files from where the pod mounts them
// to its copy on the host, when the pod mounts them (PackageSource); a
// source that is missing is an error, not an empty package.
func copyPackage(source, copyDir string) error {
	if source == "" {
		return nil
	}
	if _, err := os.Stat(filepath.Join(source, "config.json")); err != nil {
		return fmt.Errorf("the package image mounted at %s has no config.json (is it a package image, with its files under /skyhook-package?): %w", source, err)
	}
	if err := copyTree(source, copyDir); err != nil {
		return fmt.Errorf("copying the package from %s to %s: %w", source, copyDir, err)
	}
	return nil
}

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

// makeExecutable adds the execute bits to a step file in the package's
// copy before it runs, as NodeWright's agent does: a package whose scripts
// lost them (a tarball, a COPY without --chmod) runs as it runs there. The
// mode is rewritten from its permission bits alone, so a set-ID or sticky
// bit the package shipped does not survive on the host.
func makeExecutable(path string) error {
	info, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := info.Mode().Perm(); perm&0o111 != 0o111 || info.Mode()&(os.ModeSetuid|os.ModeSetgid|os.ModeSticky) != 0 {
		if err := os.Chmod(path, perm|0o111); err != nil {
			return fmt.Errorf("making step file %s executable: %w", path, err)
		}
	}
	return nil
}
