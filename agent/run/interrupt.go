package run

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// interruptSpec is the interrupt the operator passes as JSON.
type interruptSpec struct {
	Type     string   `json:"type"`
	Services []string `json:"services"`
}

// parseInterrupt reads the interrupt argument (the operator's JSON of
// spec.packages.<name>.interrupt) and checks it as admission does: a known
// type, services for the service type, each a systemd unit name (no
// whitespace, no '/', not starting with '-'), since each becomes an
// argument of systemctl.
func parseInterrupt(raw string) (interruptSpec, error) {
	var spec interruptSpec
	if err := json.Unmarshal([]byte(raw), &spec); err != nil {
		return spec, fmt.Errorf("the interrupt %q is not valid JSON: %w", raw, err)
	}
	switch spec.Type {
	case "reboot", "service", "restartAllServices", "noop":
	default:
		return spec, fmt.Errorf("the interrupt %q: type %q: want reboot, service, restartAllServices or noop", raw, spec.Type)
	}
	if spec.Type == "service" && len(spec.Services) == 0 {
		return spec, fmt.Errorf("the interrupt %q: services: a service interrupt needs services", raw)
	}
	for i, s := range spec.Services {
		if strings.TrimSpace(s) == "" || strings.ContainsAny(s, " \t\n\r\x00/") || strings.HasPrefix(s, "-") { // "-" would be an option of systemctl
			return spec, fmt.Errorf("the interrupt %q: services[%d] %q: want a systemd unit name", raw, i, s)
		}
	}
	return spec, nil
}

// interruptPath is the record that the interrupt of this package and
// generation ran: a reboot that restarts the stage pod must not reboot
// again.
func (h host) interruptPath(o Options) string {
	return h.path(h.state, h.skyhook, "interrupts", o.Package, o.Generation)
}

// runInterrupt runs the interrupt at most once per (Skyhook, package,
// generation). The record is written before a reboot (which does not
// return) and after the restarts of services. The program run in place of
// systemctl (Options.Systemctl) is found on the host first, so a missing
// one fails the interrupt without recording it.
func runInterrupt(ctx context.Context, o Options, h host) error {
	spec, err := parseInterrupt(o.Interrupt)
	if err != nil {
		return err
	}
	record := h.interruptPath(o)
	if data, err := os.ReadFile(record); err == nil {
		fmt.Fprintf(o.Out, "%s [interrupt] already ran for generation %s: %s", o.Now().UTC().Format(time.RFC3339Nano), o.Generation, data)
		return nil
	}
	mark := func() error {
		return writeFile(record, []byte(o.Now().UTC().Format(time.RFC3339)+" "+o.Interrupt+"\n"))
	}
	systemctl := o.Systemctl
	if systemctl == "" {
		systemctl = DefaultSystemctl
	}
	switch spec.Type {
	case "reboot", "service", "restartAllServices":
		if _, err := hostProgram(h, systemctl); err != nil {
			if systemctl != DefaultSystemctl {
				return fmt.Errorf("SKYHOOK_SYSTEMCTL=%s: %w", systemctl, err)
			}
			return fmt.Errorf("%w; SKYHOOK_SYSTEMCTL can name another program", err)
		}
	}
	var commands [][]string
	switch spec.Type {
	case "noop":
		return mark()
	case "reboot":
		if err := mark(); err != nil {
			return err
		}
		commands = [][]string{{systemctl, "reboot"}}
	case "service":
		commands = [][]string{{systemctl, "daemon-reload"}}
		for _, s := range spec.Services {
			commands = append(commands, []string{systemctl, "restart", s})
		}
	case "restartAllServices":
		services, err := runningServices(ctx, o, h, systemctl)
		if err != nil {
			return err
		}
		commands = [][]string{{systemctl, "daemon-reload"}}
		for _, s := range services {
			commands = append(commands, []string{systemctl, "restart", s})
		}
	}
	for _, c := range commands {
		if err := h.command(ctx, o, "interrupt", c, nil); err != nil {
			return err
		}
	}
	if spec.Type == "reboot" {
		return nil
	}
	return mark()
}

// runningServices lists the running services on the host.
func runningServices(ctx context.Context, o Options, h host, systemctl string) ([]string, error) {
	var out bytes.Buffer
	if err := h.command(ctx, o, "interrupt", []string{systemctl, "list-units", "--type=service", "--state=running", "--no-legend", "--plain"}, &out); err != nil {
		return nil, err
	}
	var services []string
	for _, line := range strings.Split(out.String(), "\n") {
		_, unit, ok := strings.Cut(line, " stdout: ") // lines come stamped (see execute)
		if fields := strings.Fields(unit); ok && len(fields) > 0 && strings.HasSuffix(fields[0], ".service") {
			services = append(services, fields[0])
		}
	}
	return services, nil
}

// hostProgram finds a host program as a path inside the host root: an
// absolute path is taken as it is (its symlinks followed inside the host
// root), a bare name is looked up in the usual directories there (the
// agent's own image has no PATH to search).
func hostProgram(h host, program string) (string, error) {
	if filepath.IsAbs(program) {
		path := filepath.Clean(program)
		resolved, err := resolveInRoot(h.root, path)
		if err != nil {
			return "", fmt.Errorf("%s on the host: %w", path, err)
		}
		info, err := os.Stat(resolved)
		if err != nil {
			return "", fmt.Errorf("%s is not on the host (no %s)", path, h.path(path))
		}
		if info.IsDir() {
			return "", fmt.Errorf("%s on the host is a directory", path)
		}
		return path, nil
	}
	if strings.Contains(program, "/") {
		return "", fmt.Errorf("%q is neither an absolute path on the host nor a bare name", program)
	}
	for _, dir := range []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"} {
		if _, err := os.Stat(h.path(dir, program)); err == nil {
			return dir + "/" + program, nil
		}
	}
	return "", fmt.Errorf("%s is not on the host (not in /usr/bin, /bin, /usr/sbin or /sbin)", program)
}

// command runs a host program (hostProgram) chrooted into the host root.
// With capture set, stdout goes there instead of the log.
func (h host) command(ctx context.Context, o Options, name string, argv []string, capture *bytes.Buffer) error {
	path, err := hostProgram(h, argv[0])
	if err != nil {
		return err
	}
	logs, err := h.openLog(o, name)
	if err != nil {
		return err
	}
	defer logs.Close()
	out := o.Out
	if capture != nil {
		out = capture
	}
	code, err := execute(ctx, command{path: path, args: argv[1:], env: []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin"},
		root: o.HostRoot, name: name, out: out, log: logs, now: o.Now})
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("%s exited with code %d", strings.Join(argv, " "), code)
	}
	return nil
}
