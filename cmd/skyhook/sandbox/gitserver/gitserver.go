// Package gitserver serves Git repositories over smart HTTP on loopback
// with git's own git-http-backend behind net/http/cgi, so that a test can
// git push and a real Flux source-controller can clone.
package gitserver

import (
	"fmt"
	"net"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// Backend is where Debian's git puts git-http-backend.
const Backend = "/usr/lib/git-core/git-http-backend"

// Server serves the bare repositories under Root at URL.
type Server struct {
	Root string
	URL  string
	srv  *http.Server
}

// Start serves dir's repositories on a loopback port until Close.
func Start(root string) (*Server, error) {
	if _, err := os.Stat(Backend); err != nil {
		return nil, fmt.Errorf("git-http-backend (Debian's git): %w", err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	h := &cgi.Handler{Path: Backend, Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1"}}
	s := &Server{Root: root, URL: "http://" + l.Addr().String(), srv: &http.Server{Handler: h}}
	go func() { _ = s.srv.Serve(l) }()
	return s, nil
}

// Close stops serving.
func (s *Server) Close() error { return s.srv.Close() }

// Create makes an empty bare repository that accepts pushes over HTTP and
// returns its URL.
func (s *Server) Create(name string) (string, error) {
	dir := filepath.Join(s.Root, name+".git")
	if err := git("", "init", "--bare", "--initial-branch=main", dir); err != nil {
		return "", err
	}
	if err := git(dir, "config", "http.receivepack", "true"); err != nil {
		return "", err
	}
	return s.URL + "/" + name + ".git", nil
}

// Push commits files (path → content, replacing the whole tree) to the
// main branch of the repository at url, from a fresh clone in work, and
// returns the commit.
func Push(work, url string, files map[string]string, message string) (string, error) {
	clone := filepath.Join(work, fmt.Sprintf("clone-%d", len(files)))
	_ = os.RemoveAll(clone)
	if err := git("", "clone", "--quiet", url, clone); err != nil {
		return "", err
	}
	entries, _ := os.ReadDir(clone)
	for _, e := range entries {
		if e.Name() != ".git" {
			_ = os.RemoveAll(filepath.Join(clone, e.Name()))
		}
	}
	for path, content := range files {
		p := filepath.Join(clone, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			return "", err
		}
	}
	for _, args := range [][]string{
		{"add", "-A"},
		{"-c", "user.name=test", "-c", "user.email=test@example.invalid", "commit", "--quiet", "--allow-empty", "-m", message},
		{"push", "--quiet", "origin", "HEAD:main"},
	} {
		if err := git(clone, args...); err != nil {
			return "", err
		}
	}
	out, err := exec.Command("git", "-C", clone, "rev-parse", "HEAD").Output()
	return strings.TrimSpace(string(out)), err
}

func git(dir string, args ...string) error {
	cmd := exec.Command("git", args...)
	if dir != "" {
		cmd.Dir = dir
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return nil
}
