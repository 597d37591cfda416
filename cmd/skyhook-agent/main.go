// Command skyhook-agent runs one mode of a package on a node, inside a
// stage pod:
//
//	skyhook-agent <mode>[,<mode>...] <host-root> <copy-dir> [interrupt-spec]
//	skyhook-agent validate <package-dir|config.json>...
//	skyhook-agent --version
//
// The modes are those of config.json (apply, apply-check, config, ...) and
// interrupt. Several modes separated by commas (apply,apply-check) run in
// order in one container, each after a marker line (agent/modelog); the
// first that fails ends the run, names itself in the container's
// termination message (SKYHOOK_TERMINATION_LOG, default
// /dev/termination-log) and gives its step's exit code.
//
// The stage pod's environment names the run: SKYHOOK_NAME,
// SKYHOOK_PACKAGE, SKYHOOK_VERSION, SKYHOOK_GENERATION; SKYHOOK_LOG_KEEP is
// how many runs of each step keep a log file on the host (default 5, 0 for
// none); SKYHOOK_CONFIGMAP_DIR is where the package's configMap is mounted
// (default /skyhook-package/configmaps); SKYHOOK_PACKAGE_SOURCE, where a pod
// without a copy container mounts the package's files (an image volume),
// which the agent then copies to the host first. NodeWright's agent options
// SKYHOOK_AGENT_WRITE_LOGS, SKYHOOK_ROOT_DIR, SKYHOOK_LOG_DIR, COPY_RESOLV,
// OVERLAY_ALWAYS_RUN_STEP and SKYHOOK_AGENT_BUFFER_LIMIT are honoured
// (docs/agent.md). SKYHOOK_SYSTEMCTL is the program the interrupt mode runs
// in place of systemctl, with the same arguments (default systemctl): an
// absolute path on the host, or a bare name looked up in the host's
// /usr/bin, /bin, /usr/sbin and /sbin; for hosts without systemd, and for
// tests that must never reboot.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/skyhook-go/skyhook/agent/modelog"
	"github.com/skyhook-go/skyhook/agent/pkgconfig"
	"github.com/skyhook-go/skyhook/agent/run"
)

// Version is the agent's version, stamped at build time with
// -ldflags "-X main.Version=..." (config/images does).
var Version = "devel"

func main() {
	os.Exit(agent(os.Args[1:]))
}

const usage = `usage: skyhook-agent <mode>[,<mode>...] <host-root> <copy-dir> [interrupt-spec]
       skyhook-agent validate <package-dir|config.json>...
       skyhook-agent --version`

func agent(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "--version", "-version", "version":
		fmt.Println("skyhook-agent " + Version)
		return 0
	case "validate":
		if len(args) < 2 {
			fmt.Fprintln(os.Stderr, usage)
			return 2
		}
		ok := true
		for _, path := range args[1:] {
			ok = pkgconfig.Report(os.Stdout, path, true) && ok
		}
		if !ok {
			return 1
		}
		return 0
	}
	if len(args) < 3 || len(args) > 4 || (args[0] == "interrupt") != (len(args) == 4) {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	modes, err := modeList(args[0])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	o, err := options(args, os.Getenv)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	o.Env, o.Out = os.Environ(), os.Stdout
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runModes(ctx, o, modes, envOr(os.Getenv, "SKYHOOK_TERMINATION_LOG", "/dev/termination-log"))
}

// modeList is the modes of the first argument: one mode, or several
// separated by commas (a stage, then its check) that run in order in one
// container. The interrupt runs alone: it has an argument of its own.
func modeList(arg string) ([]string, error) {
	modes := strings.Split(arg, ",")
	for _, m := range modes {
		if m == "" {
			return nil, fmt.Errorf("mode list %q: an empty mode (want modes separated by single commas, e.g. apply,apply-check)", arg)
		}
		if m == "interrupt" && len(modes) > 1 {
			return nil, fmt.Errorf("mode list %q: interrupt runs alone, not in a list", arg)
		}
	}
	return modes, nil
}

// runModes runs the modes in order and stops at the first that fails. With
// several, each starts with its marker line in the log (agent/modelog), and
// a failure is written as the container's termination message too (at
// messagePath, Kubernetes' /dev/termination-log), so that the operator's
// record says which mode failed (the check, say) and not only which
// container; the exit code is then the failed step's own (1 when no step
// gave one). One mode alone keeps the agent's exit code 1 on failure.
func runModes(ctx context.Context, o run.Options, modes []string, messagePath string) int {
	for _, mode := range modes {
		o.Mode = mode
		if len(modes) > 1 {
			fmt.Fprintln(o.Out, modelog.Marker(mode))
		}
		results, err := run.Run(ctx, o)
		o.Warnings = nil // written once, in the first mode's part
		if err == nil {
			continue
		}
		fmt.Fprintln(os.Stderr, err)
		if len(modes) == 1 {
			return 1
		}
		writeTerminationMessage(messagePath, fmt.Sprintf("%s failed: %v", mode, err))
		return failedStepCode(results)
	}
	return 0
}

// failedStepCode is the exit code of the last step that failed with one,
// else 1.
func failedStepCode(results []run.StepResult) int {
	for i := len(results) - 1; i >= 0; i-- {
		if r := results[i]; !r.OK && r.ExitCode > 0 {
			return r.ExitCode
		}
	}
	return 1
}

// writeTerminationMessage replaces the file's content with the message,
// cut to the 4 KiB the kubelet reads; a file that does not exist (the
// agent run outside a pod) is left alone.
func writeTerminationMessage(path, message string) {
	const limit = 4096
	if len(message) > limit {
		message = message[:limit]
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return
	}
	_, _ = f.WriteString(message)
	_ = f.Close()
}

// options are the run's options from the arguments (mode, host root, copy
// dir, the interrupt spec in interrupt mode) and the environment (getenv),
// or an error naming the variable and what it wants.
func options(args []string, getenv func(string) string) (run.Options, error) {
	keep, err := logsToKeep(getenv)
	if err != nil {
		return run.Options{}, err
	}
	nw, err := nodeWrightOptions(getenv)
	if err != nil {
		return run.Options{}, err
	}
	systemctl, err := systemctlProgram(getenv)
	if err != nil {
		return run.Options{}, err
	}
	o := run.Options{
		Mode: args[0], HostRoot: args[1], CopyDir: args[2],
		PackageSource:   getenv("SKYHOOK_PACKAGE_SOURCE"),
		ConfigMapDir:    envOr(getenv, "SKYHOOK_CONFIGMAP_DIR", "/skyhook-package/configmaps"),
		NodeMetadataDir: envOr(getenv, "SKYHOOK_NODE_METADATA_DIR", "/skyhook-package/node-metadata"),
		Skyhook:         getenv("SKYHOOK_NAME"), Package: getenv("SKYHOOK_PACKAGE"),
		Version: getenv("SKYHOOK_VERSION"), Generation: getenv("SKYHOOK_GENERATION"),
		KeepLogs: keep,
		// NodeWright's agent options for where it keeps its files.
		StateDir: getenv("SKYHOOK_ROOT_DIR"), LogDir: getenv("SKYHOOK_LOG_DIR"),
		ResolvConf: nw.resolvConf, AlwaysRunSteps: nw.alwaysRun, OutputLimit: nw.outputLimit,
		Systemctl: systemctl,
	}
	if nw.warning != "" {
		o.Warnings = append(o.Warnings, nw.warning)
	}
	if len(args) == 4 {
		o.Interrupt = args[3]
	}
	// Each names one directory of the records on the host
	// (<state>/<skyhook>/flags/<package>/<version>, .../interrupts/<package>/<generation>).
	for _, v := range []struct{ name, value string }{{"SKYHOOK_NAME", o.Skyhook}, {"SKYHOOK_PACKAGE", o.Package}, {"SKYHOOK_VERSION", o.Version}, {"SKYHOOK_GENERATION", o.Generation}} {
		if v.value == "" {
			return o, fmt.Errorf("%s is not set (the stage pod sets it)", v.name)
		}
		if v.value == "." || v.value == ".." || strings.ContainsAny(v.value, "/\x00") {
			return o, fmt.Errorf("%s=%q: want one path element (no '/', not . or ..): it names a directory of the agent's records on the host", v.name, v.value)
		}
	}
	// Directories on the host, joined under the host root: a ".." would
	// lead out of it.
	for _, v := range []struct{ name, value string }{{"SKYHOOK_ROOT_DIR", o.StateDir}, {"SKYHOOK_LOG_DIR", o.LogDir}} {
		if v.value != "" && (!filepath.IsAbs(v.value) || filepath.Clean(v.value) != v.value) {
			return o, fmt.Errorf("%s=%q: want a clean absolute path on the host (no . or .. elements, no trailing '/')", v.name, v.value)
		}
	}
	return o, nil
}

// logsToKeep is how many runs of each step keep a log file:
// SKYHOOK_LOG_KEEP (default 5), and none with NodeWright's
// SKYHOOK_AGENT_WRITE_LOGS=false.
func logsToKeep(getenv func(string) string) (int, error) {
	keep := 5
	if v := getenv("SKYHOOK_LOG_KEEP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("SKYHOOK_LOG_KEEP=%q: want a number of runs, 0 for no log files", v)
		}
		keep = n
	}
	switch v := strings.ToLower(getenv("SKYHOOK_AGENT_WRITE_LOGS")); v {
	case "", "true":
	case "false":
		keep = 0
	default:
		return 0, fmt.Errorf("SKYHOOK_AGENT_WRITE_LOGS=%q: want true or false", v)
	}
	return keep, nil
}

// systemctlProgram is SKYHOOK_SYSTEMCTL (default systemctl): an absolute
// path on the host or a bare name; a relative path with a slash is
// refused, as it would mean nothing chrooted into the host root.
func systemctlProgram(getenv func(string) string) (string, error) {
	v := envOr(getenv, "SKYHOOK_SYSTEMCTL", run.DefaultSystemctl)
	if !filepath.IsAbs(v) && strings.Contains(v, "/") {
		return "", fmt.Errorf("SKYHOOK_SYSTEMCTL=%q: want an absolute path on the host or a bare name (looked up in the host's /usr/bin, /bin, /usr/sbin and /sbin), not a relative path", v)
	}
	return v, nil
}

// nodeWright are NodeWright's agent options that change how steps run.
type nodeWright struct {
	resolvConf  string
	alwaysRun   bool
	outputLimit int
	warning     string // about a setting ignored
}

// nodeWrightOptions reads them: COPY_RESOLV=true copies the pod's
// /etc/resolv.conf to the host (NodeWright's operator sets it to false in
// every stage pod, and so the default here is not to copy);
// OVERLAY_ALWAYS_RUN_STEP=true runs the steps that a run-once flag would
// skip; SKYHOOK_AGENT_BUFFER_LIMIT is the longest piece of output written
// as one log line (bytes, default 8 KiB).
func nodeWrightOptions(getenv func(string) string) (nodeWright, error) {
	var o nodeWright
	copyResolv, err := boolEnv(getenv, "COPY_RESOLV")
	if err != nil {
		return o, err
	}
	if copyResolv {
		o.resolvConf = "/etc/resolv.conf"
	}
	if o.alwaysRun, err = boolEnv(getenv, "OVERLAY_ALWAYS_RUN_STEP"); err != nil {
		return o, err
	}
	o.outputLimit = run.DefaultOutputLimit
	if v := getenv("SKYHOOK_AGENT_BUFFER_LIMIT"); v != "" {
		// Ignored, not refused, when it is no size: NodeWright's agent
		// v7.0.0 no longer reads it, so a package that still sets it to
		// anything runs there.
		if n, err := strconv.Atoi(v); err != nil || n < 16 {
			o.warning = fmt.Sprintf("SKYHOOK_AGENT_BUFFER_LIMIT=%q ignored: want a number of bytes, at least 16; output is written in pieces of %d bytes", v, o.outputLimit)
		} else {
			o.outputLimit = n
		}
	}
	return o, nil
}

// boolEnv reads a true/false variable (any case); unset is false.
func boolEnv(getenv func(string) string, name string) (bool, error) {
	v := getenv(name)
	switch strings.ToLower(v) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
}

func envOr(getenv func(string) string, name, fallback string) string {
	if v := getenv(name); v != "" {
		return v
	}
	return fallback
}
