package cluster

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// process is one component of the cluster running as a child process.
type process struct {
	name    string
	cmd     *exec.Cmd
	logFile string
	pidFile string
	done    chan struct{}
	err     error
}

// startProcess runs path with args, output to <dir>/logs/<name>.log and its
// pid in <dir>/pids/<name>.pid. The child gets its own process group, so a
// Ctrl-C in the terminal reaches only this program, which then stops the
// children in order; and it is killed by the kernel if this program dies
// without stopping it (Pdeathsig), so nothing outlives a crashed test.
func startProcess(dir, name, path string, args ...string) (*process, error) {
	return startProcessEnv(dir, name, path, nil, args...)
}

// startProcessEnv is startProcess with extra environment variables.
func startProcessEnv(dir, name, path string, env []string, args ...string) (*process, error) {
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
	p := &process{name: name, cmd: cmd, logFile: logFile, pidFile: pidFile, done: make(chan struct{})}
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

// exited reports whether the process has ended, with how.
func (p *process) exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// stop asks the process to end (SIGTERM), and kills it after grace.
func (p *process) stop(grace time.Duration) {
	if done, _ := p.exited(); !done {
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

// ProcessAlive reports whether pid exists and has not ended (a zombie has).
func ProcessAlive(pid int) bool {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// The state follows the parenthesised command name.
	s := string(data)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z'
}
