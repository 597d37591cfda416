// Command skyhook-agent runs one mode of a package on a node, inside a
// stage pod:
//
//	skyhook-agent <mode> <host-root> <copy-dir> [interrupt-spec]
//	skyhook-agent validate <package-dir|config.json>...
//	skyhook-agent --version
//
// The modes are those of config.json (apply, apply-check, config, ...) and
// interrupt. The stage pod's environment names the run: SKYHOOK_NAME,
// SKYHOOK_PACKAGE, SKYHOOK_VERSION, SKYHOOK_GENERATION; SKYHOOK_LOG_KEEP is
// how many runs of each step keep a log file on the host (default 5, 0 for
// none); SKYHOOK_CONFIGMAP_DIR is where the package's configMap is mounted
// (default /skyhook-package/configmaps). NodeWright's agent options
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

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
	"github.com/skyhook-go/skyhook/agent/run"
)

// Version is the agent's version, stamped at build time with
// -ldflags "-X main.Version=..." (config/images does).
var Version = "devel"

func main() {
	os.Exit(agent(os.Args[1:]))
}

const usage = `usage: skyhook-agent <mode> <host-root> <copy-dir> [interrupt-spec]
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
	keep, err := logsToKeep()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	nw, err := nodeWrightOptions()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	systemctl, err := systemctlProgram()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	configMaps := envOr("SKYHOOK_CONFIGMAP_DIR", "/skyhook-package/configmaps")
	nodeMetadata := envOr("SKYHOOK_NODE_METADATA_DIR", "/skyhook-package/node-metadata")
	o := run.Options{
		Mode: args[0], HostRoot: args[1], CopyDir: args[2], ConfigMapDir: configMaps, NodeMetadataDir: nodeMetadata,
		Skyhook: os.Getenv("SKYHOOK_NAME"), Package: os.Getenv("SKYHOOK_PACKAGE"),
		Version: os.Getenv("SKYHOOK_VERSION"), Generation: os.Getenv("SKYHOOK_GENERATION"),
		Env: os.Environ(), Out: os.Stdout, KeepLogs: keep,
		// NodeWright's agent options for where it keeps its files.
		StateDir: os.Getenv("SKYHOOK_ROOT_DIR"), LogDir: os.Getenv("SKYHOOK_LOG_DIR"),
		ResolvConf: nw.resolvConf, AlwaysRunSteps: nw.alwaysRun, OutputLimit: nw.outputLimit,
		Systemctl: systemctl,
	}
	if len(args) == 4 {
		o.Interrupt = args[3]
	}
	for name, v := range map[string]string{"SKYHOOK_NAME": o.Skyhook, "SKYHOOK_PACKAGE": o.Package, "SKYHOOK_VERSION": o.Version, "SKYHOOK_GENERATION": o.Generation} {
		if v == "" {
			fmt.Fprintf(os.Stderr, "%s is not set (the stage pod sets it)\n", name)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if _, err := run.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// logsToKeep is how many runs of each step keep a log file:
// SKYHOOK_LOG_KEEP (default 5), and none with NodeWright's
// SKYHOOK_AGENT_WRITE_LOGS=false.
func logsToKeep() (int, error) {
	keep := 5
	if v := os.Getenv("SKYHOOK_LOG_KEEP"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("SKYHOOK_LOG_KEEP=%q: want a number of runs, 0 for no log files", v)
		}
		keep = n
	}
	switch v := strings.ToLower(os.Getenv("SKYHOOK_AGENT_WRITE_LOGS")); v {
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
func systemctlProgram() (string, error) {
	v := envOr("SKYHOOK_SYSTEMCTL", run.DefaultSystemctl)
	if !filepath.IsAbs(v) && strings.Contains(v, "/") {
		return "", fmt.Errorf("SKYHOOK_SYSTEMCTL=%q: want an absolute path on the host or a bare name (looked up in the host's /usr/bin, /bin, /usr/sbin and /sbin), not a relative path", v)
	}
	return v, nil
}

// options are NodeWright's agent options that change how steps run.
type options struct {
	resolvConf  string
	alwaysRun   bool
	outputLimit int
}

// nodeWrightOptions reads them: COPY_RESOLV=true copies the pod's
// /etc/resolv.conf to the host (NodeWright's operator sets it to false in
// every stage pod, and so the default here is not to copy);
// OVERLAY_ALWAYS_RUN_STEP=true runs the steps that a run-once flag would
// skip; SKYHOOK_AGENT_BUFFER_LIMIT is the longest piece of output written
// as one log line (bytes, default 8 KiB).
func nodeWrightOptions() (options, error) {
	var o options
	copyResolv, err := boolEnv("COPY_RESOLV")
	if err != nil {
		return o, err
	}
	if copyResolv {
		o.resolvConf = "/etc/resolv.conf"
	}
	if o.alwaysRun, err = boolEnv("OVERLAY_ALWAYS_RUN_STEP"); err != nil {
		return o, err
	}
	o.outputLimit = run.DefaultOutputLimit
	if v := os.Getenv("SKYHOOK_AGENT_BUFFER_LIMIT"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 16 {
			return o, fmt.Errorf("SKYHOOK_AGENT_BUFFER_LIMIT=%q: want a number of bytes, at least 16", v)
		}
		o.outputLimit = n
	}
	return o, nil
}

// boolEnv reads a true/false variable (any case); unset is false.
func boolEnv(name string) (bool, error) {
	v := os.Getenv(name)
	switch strings.ToLower(v) {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, fmt.Errorf("%s=%q: want true or false", name, v)
	}
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}
