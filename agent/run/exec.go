package run

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// command is one process to run, and where its output goes.
type command struct {
	path string
	args []string
	env  []string
	// root, when set, is chrooted into before path runs (path and dir are
	// then paths inside it).
	root string
	// dir is the working directory ("/" when empty).
	dir string
	// limit is the longest piece of output written as one line: longer
	// lines are written in pieces (DefaultOutputLimit when 0).
	limit int
	name  string
	out   io.Writer
	log   io.Writer
	now   func() time.Time
}

// DefaultOutputLimit is the longest piece of a step's output written as one
// log line unless the Options say otherwise: NodeWright's agent reads its
// steps' output 8 KiB at a time (SKYHOOK_AGENT_BUFFER_LIMIT).
const DefaultOutputLimit = 8 * 1024

// execute runs the command, writing each line of its stdout and stderr,
// with a timestamp, the step's name and the stream, to out and to log; a
// line longer than the limit is written in pieces of the limit, so no line
// is too long to pass. It returns the exit code, or an error when the
// command could not run.
func execute(ctx context.Context, c command) (int, error) {
	cmd := exec.CommandContext(ctx, c.path, c.args...)
	cmd.Env = c.env
	cmd.Dir = c.dir
	if cmd.Dir == "" {
		cmd.Dir = "/"
	}
	limit := c.limit
	if limit <= 0 {
		limit = DefaultOutputLimit
	}
	if c.root != "" {
		cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: c.root}
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("starting %s: %w", c.path, err)
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for stream, r := range map[string]io.Reader{"stdout": stdout, "stderr": stderr} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Read to the end whatever comes: a reader that stopped early
			// would leave the step blocked on a full pipe.
			br := bufio.NewReaderSize(r, limit)
			for {
				piece, _, err := br.ReadLine()
				if err != nil {
					return
				}
				line := fmt.Sprintf("%s [%s] %s: %s\n", c.now().UTC().Format(time.RFC3339Nano), c.name, stream, piece)
				mu.Lock()
				_, _ = io.WriteString(c.out, line)
				_, _ = io.WriteString(c.log, line)
				mu.Unlock()
			}
		}()
	}
	wg.Wait() // the pipes must be read to the end before Wait closes them
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return 0, nil
	case errors.As(err, &exit) && exit.ExitCode() >= 0:
		return exit.ExitCode(), nil
	default:
		return 0, err
	}
}
