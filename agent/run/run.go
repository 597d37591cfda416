// Package run executes one mode of a package on a node: it copies the
// package's root_dir over the host root, then runs the mode's steps
// chrooted into the host root, each with its environment and arguments,
// judging each by its return codes. It keeps, on the host, the run-once
// flags of non-idempotent steps, the package's version history, the
// interrupts already run, and the steps' logs.
package run

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// Options say what to run and where.
type Options struct {
	// Mode is a config.json mode, or "interrupt".
	Mode string
	// HostRoot is where the host's root is mounted ("/root" in a stage pod).
	HostRoot string
	// CopyDir is the package's copy on the host, as a path under HostRoot.
	CopyDir string
	// PackageSource, when set, is the package's files as mounted in the
	// pod (the package image's /skyhook-package, from an image volume):
	// they are copied to CopyDir before anything else, in place of the
	// stage pod's copy container. Empty: the copy container made CopyDir.
	PackageSource string
	// ConfigMapDir holds the package's configMap files as mounted in the
	// pod; they are copied to <CopyDir>/configmaps for the steps.
	ConfigMapDir string
	// NodeMetadataDir holds labels.json, annotations.json and
	// packages.json of the node as mounted in the pod; they are copied to
	// <CopyDir>/node-metadata for the steps.
	NodeMetadataDir string
	// Skyhook, Package, Version and Generation name the run; flags, history
	// and interrupt records are kept per Skyhook and package.
	Skyhook, Package, Version, Generation string
	// Env is the pod's environment, passed on to the steps.
	Env []string
	// Out receives every line the steps write (the pod log).
	Out io.Writer
	// KeepLogs is how many runs of each step keep their log file on the
	// host; 0 writes no log files.
	KeepLogs int
	// Interrupt is the interrupt to run in the interrupt mode, as JSON.
	Interrupt string
	// StateDir and LogDir are where, on the host, the flags, history and
	// interrupt records, and the step logs, are kept (DefaultStateDir and
	// DefaultLogDir when empty).
	StateDir, LogDir string
	// Now is the clock; time.Now when nil.
	Now func() time.Time
	// ResolvConf, when set, is a file (the pod's /etc/resolv.conf) copied
	// over the host's /etc/resolv.conf before the mode runs, as
	// NodeWright's agent does with COPY_RESOLV=true.
	ResolvConf string
	// AlwaysRunSteps runs the steps that a run-once flag would skip, as
	// NodeWright's OVERLAY_ALWAYS_RUN_STEP=true does.
	AlwaysRunSteps bool
	// OutputLimit is the longest piece of a step's output written as one
	// log line (DefaultOutputLimit when 0): NodeWright's
	// SKYHOOK_AGENT_BUFFER_LIMIT.
	OutputLimit int
	// Warnings are about the agent's options (a setting it ignored): each
	// is written to Out first, so the pod log shows it.
	Warnings []string
	// Systemctl is the program the interrupt mode runs in place of
	// systemctl, with the same arguments (DefaultSystemctl when empty;
	// SKYHOOK_SYSTEMCTL): an absolute path on the host, resolved under
	// HostRoot, or a bare name looked up in the host's /usr/bin, /bin,
	// /usr/sbin and /sbin. Hosts without systemd, and tests that must
	// never reboot, name another program.
	Systemctl string
}

// DefaultSystemctl is the program the interrupts run unless the Options
// say otherwise.
const DefaultSystemctl = "systemctl"

// The directories on the host (paths inside the host root) unless the
// Options say otherwise.
const (
	DefaultStateDir = "/var/lib/skyhook"
	DefaultLogDir   = "/var/log/skyhook"
)

// StepResult is how one step went.
type StepResult struct {
	Name     string
	ExitCode int
	OK       bool
	Skipped  string // why the step did not run, when it did not
	Err      error  // a step that could not start
}

// Run runs the mode. It returns the steps' results, and an error when the
// mode failed: an action mode stops at its first failing step, a check mode
// runs every check and fails if any did.
func Run(ctx context.Context, o Options) ([]StepResult, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	for _, w := range o.Warnings {
		fmt.Fprintf(o.Out, "%s [agent] warning: %s\n", o.Now().UTC().Format(time.RFC3339Nano), w)
	}
	inside, err := filepath.Rel(o.HostRoot, o.CopyDir)
	if err != nil || strings.HasPrefix(inside, "..") {
		return nil, fmt.Errorf("copy dir %s is not under the host root %s", o.CopyDir, o.HostRoot)
	}
	h := host{root: o.HostRoot, skyhook: o.Skyhook, state: o.StateDir, logs: o.LogDir}
	if h.state == "" {
		h.state = DefaultStateDir
	}
	if h.logs == "" {
		h.logs = DefaultLogDir
	}
	if o.Mode != "interrupt" && !slices.Contains(pkgconfig.Modes, o.Mode) {
		return nil, fmt.Errorf("unknown mode %q (modes: %s, interrupt)", o.Mode, strings.Join(pkgconfig.Modes, ", "))
	}
	if o.ResolvConf != "" {
		if err := copyResolvConf(o.ResolvConf, o.HostRoot); err != nil {
			return nil, fmt.Errorf("copying %s to the host (COPY_RESOLV): %w", o.ResolvConf, err)
		}
	}
	if o.Mode == "interrupt" {
		return nil, runInterrupt(ctx, o, h)
	}
	if err := copyPackage(o.PackageSource, o.CopyDir); err != nil {
		return nil, err
	}
	if o.PackageSource != "" {
		fmt.Fprintf(o.Out, "%s [agent] copied the package from %s to %s\n", o.Now().UTC().Format(time.RFC3339Nano), o.PackageSource, o.CopyDir)
	}
	cfg, problems, err := pkgconfig.Load(o.CopyDir)
	if err != nil {
		return nil, err
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("the package's config.json:\n%w", problems)
	}
	if !strings.HasPrefix(o.Mode, "uninstall") {
		if err := copyTree(filepath.Join(o.CopyDir, "root_dir"), o.HostRoot); err != nil {
			return nil, fmt.Errorf("copying root_dir over the host root: %w", err)
		}
	}
	if o.ConfigMapDir != "" {
		if err := copyTree(o.ConfigMapDir, filepath.Join(o.CopyDir, "configmaps")); err != nil {
			return nil, fmt.Errorf("copying the configMap: %w", err)
		}
	}
	if o.NodeMetadataDir != "" {
		if err := copyTree(o.NodeMetadataDir, filepath.Join(o.CopyDir, "node-metadata")); err != nil {
			return nil, fmt.Errorf("copying the node metadata: %w", err)
		}
	}
	// NodeWright's agent checks the expected configMap files in every mode
	// but the uninstall ones, before any step runs.
	if !strings.HasPrefix(o.Mode, "uninstall") {
		for _, f := range cfg.ExpectedConfigFiles {
			if _, err := os.Stat(filepath.Join(o.CopyDir, "configmaps", f)); err != nil {
				return nil, fmt.Errorf("expected config file %q (expected_config_files) is not in the package's configMap: no %s", f,
					filepath.Join("/"+inside, "configmaps", f))
			}
		}
	}
	r := runner{o: o, h: h, inside: "/" + inside, cfg: cfg}
	if r.upgrade() {
		r.previous = h.previousVersion(o.Package)
	}
	results, err := r.mode(ctx)
	if err == nil {
		err = h.recordVersion(o, cfg)
	}
	return results, err
}

// runner runs the steps of one mode.
type runner struct {
	o      Options
	h      host
	inside string // the copy dir as seen inside the host root
	cfg    *pkgconfig.Config
	// previous is the version before this one, in the upgrade modes.
	previous string
}

// runOnceModes are the modes whose steps with idempotence false are skipped
// once they ran for the version: NodeWright's agent runs such steps again
// in config, upgrade and uninstall, and never skips a check.
var runOnceModes = []string{"apply", "post-interrupt"}

func (r runner) check() bool   { return strings.HasSuffix(r.o.Mode, "-check") }
func (r runner) upgrade() bool { return r.o.Mode == "upgrade" || r.o.Mode == "upgrade-check" }

func (r runner) mode(ctx context.Context) ([]StepResult, error) {
	var results []StepResult
	var failed []string
	for _, s := range r.cfg.Modes[r.o.Mode] {
		res := r.step(ctx, s)
		results = append(results, res)
		if res.OK {
			continue
		}
		failed = append(failed, describe(res))
		if !r.check() {
			break // an action mode stops at its first failure
		}
	}
	if len(failed) > 0 {
		return results, fmt.Errorf("mode %s failed: %s", r.o.Mode, strings.Join(failed, "; "))
	}
	return results, nil
}

func describe(res StepResult) string {
	if res.Err != nil {
		return fmt.Sprintf("step %s: %v", res.Name, res.Err)
	}
	return fmt.Sprintf("step %s exited with code %d", res.Name, res.ExitCode)
}

// step runs one step. A step with idempotence false that succeeded in an
// action mode leaves a flag; in apply and post-interrupt the flag skips it
// for the rest of the package version, unless AlwaysRunSteps.
func (r runner) step(ctx context.Context, s pkgconfig.Step) StepResult {
	res := StepResult{Name: s.Name}
	runOnce := !r.check() && !s.Idempotence
	flag := r.h.flagPath(r.o, s)
	if runOnce && slices.Contains(runOnceModes, r.o.Mode) {
		if _, err := os.Stat(flag); err == nil {
			if !r.o.AlwaysRunSteps {
				res.OK, res.Skipped = true, fmt.Sprintf("ran already for version %s", r.o.Version)
				r.note(s.Name, "skipped: "+res.Skipped)
				return res
			}
			r.note(s.Name, fmt.Sprintf("ran already for version %s; running it again (OVERLAY_ALWAYS_RUN_STEP)", r.o.Version))
		}
	}
	env := r.env(s)
	args, err := expand(s.Arguments, env)
	if err != nil {
		res.Err = err
		return res
	}
	if s.UpgradeStep && r.upgrade() {
		args = append(args, r.previous, r.cfg.PackageVersion)
	}
	if err := makeExecutable(filepath.Join(r.o.CopyDir, "skyhook_dir", s.Path)); err != nil {
		res.Err = err
		return res
	}
	path, root, dir := r.inside+"/skyhook_dir/"+s.Path, r.o.HostRoot, r.inside
	if !s.OnHost {
		path, root, dir = filepath.Join(r.o.CopyDir, "skyhook_dir", s.Path), "", r.o.CopyDir
	}
	logs, err := r.h.openLog(r.o, s.Name)
	if err != nil {
		res.Err = err
		return res
	}
	defer logs.Close()
	res.ExitCode, res.Err = execute(ctx, command{path: path, args: args, env: env, root: root, dir: dir, limit: r.o.OutputLimit,
		name: s.Name, out: r.o.Out, log: logs, now: r.o.Now})
	res.OK = res.Err == nil && slices.Contains(s.Returncodes, res.ExitCode)
	if res.OK && runOnce {
		if err := writeFile(flag, []byte(r.o.Now().UTC().Format(time.RFC3339)+"\n")); err != nil {
			res.OK, res.Err = false, fmt.Errorf("recording that it ran: %w", err)
		}
	}
	return res
}

// note writes a line of the agent's own about a step to the pod log.
func (r runner) note(step, msg string) {
	fmt.Fprintf(r.o.Out, "%s [%s] %s\n", r.o.Now().UTC().Format(time.RFC3339Nano), step, msg)
}

// env is the step's environment, later settings winning as NodeWright's
// agent layers them: the pod's; SKYHOOK_RESOURCE_ID when the pod has none;
// the step's own; in the upgrade modes the previous and current versions;
// and where the package is.
func (r runner) env(s pkgconfig.Step) []string {
	env := append([]string{}, r.o.Env...)
	if _, ok := lookup(env, "SKYHOOK_RESOURCE_ID"); !ok {
		// NodeWright's operator gives it as <skyhook>-<uid>-<generation>_<package>_<version>;
		// packages (NVIDIA's tuning) take the package name from its second field.
		env = append(env, fmt.Sprintf("SKYHOOK_RESOURCE_ID=%s-%s_%s_%s", r.o.Skyhook, r.o.Generation, r.o.Package, r.o.Version))
	}
	for _, k := range slices.Sorted(maps.Keys(s.Env)) {
		env = append(env, k+"="+s.Env[k])
	}
	if r.upgrade() {
		current := r.cfg.PackageVersion
		env = append(env, "PREVIOUS_VERSION="+r.previous, "CURRENT_VERSION="+current,
			"SKYHOOK_PREVIOUS_VERSION="+r.previous, "SKYHOOK_CURRENT_VERSION="+current)
	}
	dir := r.inside
	if !s.OnHost {
		dir = r.o.CopyDir
	}
	return append(env, "SKYHOOK_DIR="+dir, "STEP_ROOT="+dir+"/skyhook_dir")
}

// expand replaces env:NAME arguments by the variable's value; a variable
// that is not set fails the step.
func expand(args, env []string) ([]string, error) {
	out := make([]string, len(args))
	for i, a := range args {
		name, ok := strings.CutPrefix(a, "env:")
		if !ok {
			out[i] = a
			continue
		}
		value, found := lookup(env, name)
		if !found {
			return nil, fmt.Errorf("argument %d is %q, but %s is not set", i, a, name)
		}
		out[i] = value
	}
	return out, nil
}

// lookup finds the last setting of name in env (later ones win, as for
// exec).
func lookup(env []string, name string) (string, bool) {
	for i := len(env) - 1; i >= 0; i-- {
		if k, v, ok := strings.Cut(env[i], "="); ok && k == name {
			return v, true
		}
	}
	return "", false
}
