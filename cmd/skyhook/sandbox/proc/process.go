// Package proc runs the local cluster's components as child processes of
// this program, each with its log and pid file under a state directory,
// and reads what Linux's /proc tells of processes: whether one is alive,
// which run below another, which name a word on their command line.
//
// The pid files let `skyhook sandbox down` stop the processes of a
// supervisor that is gone (KillRecorded).
package proc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
)

// Process is one component of the cluster running as a child process.
type Process struct {
	dir     string
	name    string
	cmd     *exec.Cmd
	logFile string
	pidFile string
	done    chan struct{}
	err     error
}

// Start runs path with args, output to <dir>/logs/<name>.log and its
// pid in <dir>/pids/<name>.pid. The child gets its own process group, so a
// Ctrl-C in the terminal reaches only this program, which then stops the
// children in order; and it is killed by the kernel if this program dies
// without stopping it (Pdeathsig), so nothing outlives a crashed test.
func Start(dir, name, path string, args ...string) (*Process, error) {
	return StartEnv(dir, name, path, nil, args...)
}

// StartEnv is Start with extra environment variables.
func StartEnv(dir, name, path string, env []string, args ...string) (*Process, error) {
	logFile := filepath.Join(dir, "logs", name+".log")
	pidFile := filepath.Join(dir, "pids", name+".pid")
	for _, d := range []string{filepath.Dir(logFile), filepath.Dir(pidFile)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	out, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(path, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = childAttr()
	if err := cmd.Start(); err != nil {
		out.Close()
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{dir: dir, name: name, cmd: cmd, logFile: logFile, pidFile: pidFile, done: make(chan struct{})}
	if err := os.WriteFile(pidFile, []byte(strconv.Itoa(cmd.Process.Pid)+"\n"+path+"\n"), 0o644); err != nil {
		_ = cmd.Process.Kill()
		out.Close()
		return nil, err
	}
	go func() {
		p.err = cmd.Wait()
		out.Close()
		close(p.done)
	}()
	return p, nil
}

// StartAgain starts the command p ran again, with the same arguments and
// environment, its output to the same log and its pid to the same file;
// Stop p first.
func (p *Process) StartAgain() (*Process, error) {
	return StartEnv(p.dir, p.name, p.cmd.Path, p.cmd.Env, p.cmd.Args[1:]...)
}

// Name is the name the process was started with.
func (p *Process) Name() string { return p.name }

// Pid is the process's pid.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// LogFile is the file the process's output goes to.
func (p *Process) LogFile() string { return p.logFile }

// Done is closed when the process has ended.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the process has ended, with how.
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Stop asks the process to end (SIGTERM), and kills it after grace.
func (p *Process) Stop(grace time.Duration) {
	if done, _ := p.Exited(); !done {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGTERM)
		select {
		case <-p.done:
		case <-time.After(grace):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
		}
	}
	_ = os.Remove(p.pidFile)
}

// Kill ends the process and its group at once (SIGKILL), as a power cut
// would, and waits until it has ended.
func (p *Process) Kill() {
	if done, _ := p.Exited(); !done {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		<-p.done
	}
	_ = os.Remove(p.pidFile)
}

// WaitFor polls cond until it holds, the timeout passes, or p exits (then
// the error has the end of its log).
func (p *Process) WaitFor(ctx context.Context, timeout time.Duration, what string, cond wait.ConditionWithContextFunc) error {
	err := wait.PollUntilContextTimeout(ctx, 100*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if done, exitErr := p.Exited(); done {
			return false, fmt.Errorf("%s exited (%v); the end of %s:\n%s", p.name, exitErr, p.logFile, TailFile(p.logFile, 20))
		}
		return cond(ctx)
	})
	if err != nil && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("waiting for %s: %w", what, err)
	}
	return err
}

// WaitHTTP waits until url answers 200 OK, or p exits.
func (p *Process) WaitHTTP(ctx context.Context, hc *http.Client, url string, timeout time.Duration) error {
	return p.WaitFor(ctx, timeout, url, func(ctx context.Context) (bool, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return false, err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return false, nil // not listening yet
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK, nil
	})
}

// TailFile returns the last n lines of a file, for error messages.
func TailFile(path string, n int) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// KillRecorded stops the processes whose pid files are under dir/pids and
// whose command is still the recorded binary (a reused pid is left alone).
// It is the safety net of `sandbox down` when the supervisor is gone.
func KillRecorded(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	if err != nil {
		return nil, err
	}
	var killed []string
	var errs []error
	for _, f := range files {
		pid, path, ok := readPidFile(f)
		if ok && processRuns(pid, path) {
			if err := syscall.Kill(-pid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
				errs = append(errs, fmt.Errorf("killing %s (pid %d): %w", filepath.Base(f), pid, err))
				continue
			}
			killed = append(killed, fmt.Sprintf("%s (pid %d)", strings.TrimSuffix(filepath.Base(f), ".pid"), pid))
		}
		_ = os.Remove(f)
	}
	return killed, errors.Join(errs...)
}

// RecordedRunning lists the recorded processes that still run, by name.
func RecordedRunning(dir string) map[string]int {
	files, _ := filepath.Glob(filepath.Join(dir, "pids", "*.pid"))
	running := map[string]int{}
	for _, f := range files {
		if pid, path, ok := readPidFile(f); ok && processRuns(pid, path) {
			running[strings.TrimSuffix(filepath.Base(f), ".pid")] = pid
		}
	}
	return running
}

func readPidFile(file string) (pid int, path string, ok bool) {
	data, err := os.ReadFile(file)
	if err != nil {
		return 0, "", false
	}
	fields := strings.SplitN(strings.TrimSpace(string(data)), "\n", 2)
	pid, err = strconv.Atoi(fields[0])
	if err != nil || len(fields) < 2 {
		return 0, "", false
	}
	return pid, fields[1], true
}

// processRuns reports whether pid is alive and runs the binary at path.
func processRuns(pid int, path string) bool {
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil {
		return false
	}
	return strings.TrimSuffix(exe, " (deleted)") == path
}

// Alive reports whether pid exists and has not ended (a zombie has).
func Alive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}

// FreePorts reserves n distinct free loopback ports. The ports are released
// before the components bind them, which leaves a small window for a race
// with other programs; components that fail to bind show it in their log.
func FreePorts(n int) ([]int, error) {
	var ports []int
	var listeners []net.Listener
	defer func() {
		for _, l := range listeners {
			l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		listeners = append(listeners, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
