package run

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// NVIDIA's official packages (test/reference/skyhook-packages: their
// config.json byte for byte) run through this agent in the chroot test
// root. Their scripts are not here: each step path the config names gets a
// stand-in of this test's own that records how it was run (argv, working
// directory, the environment a step gets) and exits with the code the test
// chooses. The stand-ins also check what NVIDIA's scripts expect of the
// agent (below, standInChecks). What the agent should do is worked out by
// nodeWright, a model of NodeWright's agent (its controller.py) written
// from reading it: which steps run and in which order, their arguments and
// environment, return codes, run-once flags, history and the expected
// configMap files.

const referencePackages = "../../test/reference/skyhook-packages"

// The environment variables the stand-ins record, besides each step's own
// env from config.json.
var recordedEnv = []string{"SKYHOOK_DIR", "STEP_ROOT", "PREVIOUS_VERSION", "CURRENT_VERSION",
	"SKYHOOK_PREVIOUS_VERSION", "SKYHOOK_CURRENT_VERSION", "SKYHOOK_RESOURCE_ID"}

// standInChecks are what NVIDIA's scripts, by step path, need from the
// agent, as shell tests run by the stand-in (a failed one makes it exit 97
// naming it). Every stand-in also checks what all of them rely on:
// STEP_ROOT is $SKYHOOK_DIR/skyhook_dir (nvidia-setup sources
// ${SKYHOOK_DIR}/skyhook_dir/load_defaults.sh), $0 is the step's path
// there, $SKYHOOK_DIR/configmaps exists (tuned's checks fail without it),
// and the working directory is writable (nvidia-setup's EFA step downloads
// into it).
var standInChecks = map[string][]string{
	// It sources ${SKYHOOK_DIR}/configmaps/$1.sh.
	"shellscript_run.sh": {`test -f "$SKYHOOK_DIR/configmaps/$1.sh"`},
	// They name their drop-in files after the package, the second
	// '_'-field of SKYHOOK_RESOURCE_ID.
	"update_settings.sh":                 {`r=${SKYHOOK_RESOURCE_ID#*_}; test -n "${r%%_*}"`},
	"update_settings_check.sh":           {`r=${SKYHOOK_RESOURCE_ID#*_}; test -n "${r%%_*}"`},
	"update_settings_uninstall.sh":       {`r=${SKYHOOK_RESOURCE_ID#*_}; test -n "${r%%_*}"`},
	"update_settings_uninstall_check.sh": {`r=${SKYHOOK_RESOURCE_ID#*_}; test -n "${r%%_*}"`},
	// They read the package's profiles at ${SKYHOOK_DIR}/profiles.
	"prepare_nvidia_profiles.sh":       {`test -d "$SKYHOOK_DIR/profiles"`},
	"prepare_nvidia_profiles_check.sh": {`test -d "$SKYHOOK_DIR/profiles"`},
	"prepare_nvidia_configs.sh":        {`test -d "$SKYHOOK_DIR/profiles"`},
	"prepare_nvidia_configs_check.sh":  {`test -d "$SKYHOOK_DIR/profiles"`},
}

// configMapFiles are the configMap files the test gives each package
// besides its expected_config_files: shellscript's scripts, one per mode.
var configMapFiles = map[string][]string{
	"shellscript": {"apply.sh", "apply_check.sh", "config.sh", "config_check.sh", "post_interrupt.sh",
		"post_interrupt_check.sh", "uninstall.sh", "uninstall_check.sh"},
}

// lifecycle is the order the operator runs a package's modes in.
var lifecycle = []string{"apply", "apply-check", "config", "config-check", "post-interrupt", "post-interrupt-check",
	"upgrade", "upgrade-check", "uninstall", "uninstall-check"}

// call is one run of a stand-in.
type call struct {
	Path, Argv0, Cwd string
	Args             []string
	Env              map[string]string
	ConfigMaps       []string
	Unmet            []string
}

func (c call) String() string {
	return fmt.Sprintf("%s argv0=%s args=%q cwd=%s env=%v", c.Path, c.Argv0, c.Args, c.Cwd, c.Env)
}

func standIn(path string, envNames []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#!/bin/sh\n# Stand-in for %s: records how the agent ran it.\nout=/skyhook-test/calls\n", path)
	fmt.Fprintf(&b, "echo 'call %s' >> $out\necho \"argv0 $0\" >> $out\nfor a in \"$@\"; do echo \"arg $a\" >> $out; done\n", path)
	b.WriteString("echo \"cwd $(pwd)\" >> $out\n")
	fmt.Fprintf(&b, "for v in %s; do eval \"test \\\"\\${$v+set}\\\" = set && echo \\\"env $v=\\$$v\\\" >> $out\"; done\n", strings.Join(envNames, " "))
	b.WriteString("ls \"$SKYHOOK_DIR/configmaps\" | while read f; do echo \"configmap $f\" >> $out; done\n")
	checks := append([]string{
		`test "$STEP_ROOT" = "$SKYHOOK_DIR/skyhook_dir"`,
		fmt.Sprintf(`test "$0" = "$STEP_ROOT/%s"`, path),
		`test -d "$SKYHOOK_DIR/configmaps"`,
		`touch ./.stand-in && rm ./.stand-in`,
	}, standInChecks[path]...)
	b.WriteString("code=0\n")
	for _, c := range checks {
		fmt.Fprintf(&b, "if ! ( %s ); then echo 'unmet %s' >> $out; code=97; fi\n", c, strings.ReplaceAll(c, "'", ""))
	}
	fmt.Fprintf(&b, "echo end >> $out\ntest $code = 0 && test -f /skyhook-test/exit/%s && code=$(cat /skyhook-test/exit/%s)\nexit $code\n",
		exitKey(path), exitKey(path))
	return b.String()
}

func exitKey(path string) string { return strings.ReplaceAll(path, "/", "_") }

// readCalls reads and clears the stand-ins' records.
func readCalls(t *testing.T, root string) []call {
	t.Helper()
	file := filepath.Join(root, "skyhook-test", "calls")
	data, err := os.ReadFile(file)
	if os.IsNotExist(err) {
		return nil
	} else if err != nil {
		t.Fatal(err)
	}
	_ = os.Remove(file)
	var calls []call
	c := call{Env: map[string]string{}}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		key, value, _ := strings.Cut(line, " ")
		switch key {
		case "call":
			c.Path = value
		case "argv0":
			c.Argv0 = value
		case "arg":
			c.Args = append(c.Args, value)
		case "cwd":
			c.Cwd = value
		case "env":
			k, v, _ := strings.Cut(value, "=")
			c.Env[k] = v
		case "configmap":
			c.ConfigMaps = append(c.ConfigMaps, value)
		case "unmet":
			c.Unmet = append(c.Unmet, value)
		case "end":
			calls = append(calls, c)
			c = call{Env: map[string]string{}}
		default:
			t.Fatalf("a stand-in wrote %q", line)
		}
	}
	return calls
}

// nodeWright is NodeWright's agent as its controller.py runs a package,
// keeping the state it keeps on a node: run-once flags (by package
// version, step path, arguments and return codes, set after every step an
// action mode ran successfully) and the package's history.
type nodeWright struct {
	skyhookPkg string // the package's name in the Skyhook
	podEnv     map[string]string
	flags      map[string]bool
	history    *string // the current version; nil without a history
}

// run is what NodeWright's agent does in a mode: the calls it makes and
// whether the mode succeeds. configMaps are the files in the package's
// configMap; exits the codes the steps exit with, by path.
func (nw *nodeWright) run(cfg *pkgconfig.Config, mode, inside string, configMaps []string, exits map[string]int) ([]call, bool) {
	if !strings.HasPrefix(mode, "uninstall") {
		for _, f := range cfg.ExpectedConfigFiles {
			if !slices.Contains(configMaps, f) {
				return nil, false // SkyhookValidationError before any step
			}
		}
	}
	check := strings.HasSuffix(mode, "-check")
	upgrade := mode == "upgrade" || mode == "upgrade-check"
	previous := "unknown"
	if nw.history != nil {
		previous = *nw.history
	}
	flag := func(s pkgconfig.Step) string {
		return fmt.Sprintf("%s/%s_%q_%v", cfg.PackageVersion, s.Path, s.Arguments, s.Returncodes)
	}
	var calls []call
	ok := true
	for _, s := range cfg.Modes[mode] {
		if !check && nw.flags[flag(s)] && !slices.Contains([]string{"config", "uninstall", "upgrade"}, mode) && !s.Idempotence {
			continue // check_flag_file: skipped
		}
		c := call{Path: s.Path, Argv0: inside + "/skyhook_dir/" + s.Path, Cwd: inside, Env: map[string]string{}}
		for _, a := range s.Arguments {
			if name, isEnv := strings.CutPrefix(a, "env:"); isEnv {
				a = nw.podEnv[name]
			}
			c.Args = append(c.Args, a)
		}
		maps.Copy(c.Env, s.Env)
		if upgrade {
			c.Env["PREVIOUS_VERSION"], c.Env["CURRENT_VERSION"] = previous, cfg.PackageVersion
			// This project's names for the same, beside NodeWright's.
			c.Env["SKYHOOK_PREVIOUS_VERSION"], c.Env["SKYHOOK_CURRENT_VERSION"] = previous, cfg.PackageVersion
			if s.UpgradeStep {
				c.Args = append(c.Args, previous, cfg.PackageVersion)
			}
		}
		c.Env["SKYHOOK_DIR"], c.Env["STEP_ROOT"] = inside, inside+"/skyhook_dir"
		// NodeWright's operator sets it in the pod: <skyhook>-<uid>-<generation>_<package>_<version>.
		c.Env["SKYHOOK_RESOURCE_ID"] = fmt.Sprintf("demo-1_%s_%s", nw.skyhookPkg, cfg.PackageVersion)
		calls = append(calls, c)
		if !slices.Contains(s.Returncodes, exits[s.Path]) {
			ok = false
			if !check {
				return calls, false
			}
			continue
		}
		if !check {
			nw.flags[flag(s)] = true
		}
	}
	if !ok {
		return calls, false
	}
	switch mode {
	case "apply-check", "upgrade-check":
		v := cfg.PackageVersion
		nw.history = &v
	case "uninstall-check":
		v := "uninstalled"
		nw.history = &v
		for _, steps := range cfg.Modes {
			for _, s := range steps {
				delete(nw.flags, flag(s))
			}
		}
	}
	return calls, true
}

// node is one host root with a package laid out on it, and NodeWright's
// state for it.
type node struct {
	t          *testing.T
	root       string
	name       string // the package's directory, its name in the Skyhook
	configMaps string
	nw         *nodeWright
}

func newNode(t *testing.T, name string) *node {
	root := newRoot(t)
	if err := os.MkdirAll(filepath.Join(root, "skyhook-test", "exit"), 0o755); err != nil {
		t.Fatal(err)
	}
	n := &node{t: t, root: root, name: name, configMaps: t.TempDir(),
		nw: &nodeWright{skyhookPkg: name, podEnv: map[string]string{"PATH": "/bin:/usr/bin"}, flags: map[string]bool{}}}
	return n
}

// install lays the package out as the operator copies it for a version: the
// config.json given, a stand-in per step path, a root_dir file and the
// profiles NVIDIA's tuning packages carry; and fills the configMap.
func (n *node) install(data []byte) (*pkgconfig.Config, string) {
	t := n.t
	cfg, problems := pkgconfig.Parse(data)
	if len(problems) > 0 {
		t.Fatalf("config.json: %v", problems)
	}
	copyDir := filepath.Join(n.root, "var/lib/skyhook/demo", n.name, cfg.PackageVersion, "1")
	files := map[string]string{"config.json": string(data), "root_dir/etc/skyhook-test/" + n.name: cfg.PackageVersion, "profiles/README": "profiles"}
	envNames := map[string][]string{}
	for _, steps := range cfg.Modes {
		for _, s := range steps {
			envNames[s.Path] = append(envNames[s.Path], slices.Collect(maps.Keys(s.Env))...)
		}
	}
	for path, names := range envNames {
		slices.Sort(names)
		files["skyhook_dir/"+path] = standIn(path, append(slices.Clone(recordedEnv), slices.Compact(names)...))
	}
	for name, content := range files {
		mode := os.FileMode(0o644)
		if strings.HasPrefix(name, "skyhook_dir/") {
			mode = 0o755
		}
		write(t, filepath.Join(copyDir, name), content, mode)
	}
	for _, f := range append(slices.Clone(cfg.ExpectedConfigFiles), configMapFiles[n.name]...) {
		write(t, filepath.Join(n.configMaps, f), "value of "+f+"\n", 0o644)
	}
	return cfg, copyDir
}

func write(t *testing.T, path, content string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
}

// run runs a mode through this agent and through the model, with the
// steps exiting as exits says (by path; 0 otherwise), and compares them.
// It returns the agent's error.
func (n *node) run(cfg *pkgconfig.Config, copyDir, mode string, exits map[string]int) error {
	t := n.t
	t.Helper()
	exitDir := filepath.Join(n.root, "skyhook-test", "exit")
	_ = os.RemoveAll(exitDir)
	_ = os.MkdirAll(exitDir, 0o755)
	for path, code := range exits {
		write(t, filepath.Join(exitDir, exitKey(path)), fmt.Sprint(code), 0o644)
	}
	entries, _ := os.ReadDir(n.configMaps)
	var configMaps []string
	for _, e := range entries {
		configMaps = append(configMaps, e.Name())
	}
	inside := strings.TrimPrefix(copyDir, n.root)
	want, wantOK := n.nw.run(cfg, mode, inside, configMaps, exits)

	var out bytes.Buffer
	_, err := Run(context.Background(), Options{Mode: mode, HostRoot: n.root, CopyDir: copyDir, ConfigMapDir: n.configMaps,
		Skyhook: "demo", Package: n.name, Version: cfg.PackageVersion, Generation: "1",
		Env: []string{"PATH=/bin:/usr/bin"}, Out: &out})
	got := readCalls(t, n.root)
	for _, c := range got {
		if len(c.Unmet) > 0 {
			t.Errorf("%s: %s was run without what NVIDIA's script needs: %v", mode, c.Path, c.Unmet)
		}
		if !strings.HasPrefix(mode, "uninstall") {
			for _, f := range cfg.ExpectedConfigFiles {
				if !slices.Contains(c.ConfigMaps, f) {
					t.Errorf("%s: %s found no configmaps/%s", mode, c.Path, f)
				}
			}
		}
	}
	if (err == nil) != wantOK {
		t.Errorf("%s: agent error %v; NodeWright's agent would succeed: %v\n%s", mode, err, wantOK, out.String())
	}
	if len(got) != len(want) {
		t.Errorf("%s: the agent ran %d steps:\n%s\nNodeWright's agent would run %d:\n%s", mode, len(got), lines(got), len(want), lines(want))
		return err
	}
	for i := range want {
		g, w := got[i], want[i]
		g.ConfigMaps, g.Unmet = nil, nil
		if !reflect.DeepEqual(g, w) {
			t.Errorf("%s: step %d ran as\n %v\nNodeWright's agent runs it as\n %v", mode, i, g, w)
		}
	}
	return err
}

func lines(calls []call) string {
	var s []string
	for _, c := range calls {
		s = append(s, "  "+c.String())
	}
	return strings.Join(s, "\n")
}

// modesOf are the modes the config declares (with steps), in lifecycle order.
func modesOf(cfg *pkgconfig.Config, keep func(string) bool) []string {
	var modes []string
	for _, m := range lifecycle {
		if len(cfg.Modes[m]) > 0 && keep(m) {
			modes = append(modes, m)
		}
	}
	return modes
}

var packageVersion = regexp.MustCompile(`("package_version"\s*:\s*)"[^"]*"`)

// withVersion is the config.json as the package's release of another
// version would have it: package_version changed, the rest as is.
func withVersion(data []byte, version string) []byte {
	return packageVersion.ReplaceAll(data, []byte(`${1}"`+version+`"`))
}

func TestNVIDIAPackagesRunAsNodeWright(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join(referencePackages, "*", "config.json"))
	if err != nil || len(dirs) != 7 {
		t.Fatalf("NVIDIA's packages: %v, %v; want 7", dirs, err)
	}
	for _, file := range dirs {
		name := filepath.Base(filepath.Dir(file))
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(name, func(t *testing.T) { nvidiaPackage(t, name, data) })
	}
}

func nvidiaPackage(t *testing.T, name string, data []byte) {
	notUpgrade := func(m string) bool { return !strings.HasPrefix(m, "upgrade") }
	all := func(string) bool { return true }

	// Every mode but the upgrade ones, in the operator's order, twice (a
	// rerun), then the same after an uninstall; then a new version.
	t.Run("lifecycle", func(t *testing.T) {
		n := newNode(t, name)
		cfg, dir := n.install(data)
		modes := modesOf(cfg, notUpgrade)
		for range 3 {
			for _, m := range modes {
				if err := n.run(cfg, dir, m, nil); err != nil {
					t.Fatalf("%s: %v", m, err)
				}
			}
		}
		next, nextDir := n.install(withVersion(data, "99.0.0"))
		for _, m := range modes {
			if err := n.run(next, nextDir, m, nil); err != nil {
				t.Fatalf("%s of a new version: %v", m, err)
			}
		}
		n.checkHistory()
	})

	// The upgrade modes: without a history (previous "unknown"), and from an
	// older version that apply-check recorded.
	if cfg, _ := pkgconfig.Parse(data); len(cfg.Modes["upgrade"]) > 0 {
		t.Run("upgrade", func(t *testing.T) {
			n := newNode(t, name)
			cfg, dir := n.install(data)
			for _, m := range []string{"upgrade", "upgrade-check"} {
				if err := n.run(cfg, dir, m, nil); err != nil {
					t.Fatalf("%s: %v", m, err)
				}
			}
			n = newNode(t, name)
			old, oldDir := n.install(withVersion(data, "0.0.1"))
			for _, m := range modesOf(old, func(m string) bool { return strings.HasPrefix(m, "apply") }) {
				if err := n.run(old, oldDir, m, nil); err != nil {
					t.Fatalf("%s 0.0.1: %v", m, err)
				}
			}
			cfg, dir = n.install(data)
			for _, m := range []string{"upgrade", "upgrade-check", "upgrade", "upgrade-check"} {
				if err := n.run(cfg, dir, m, nil); err != nil {
					t.Fatalf("%s: %v", m, err)
				}
			}
			n.checkHistory()
		})
	}

	// Failing steps: an action mode stops at the first failure (the first
	// step, then the second when there is one); a check mode runs every
	// check and fails; nothing is recorded for a failed check.
	t.Run("failures", func(t *testing.T) {
		n := newNode(t, name)
		cfg, dir := n.install(data)
		for _, m := range modesOf(cfg, all) {
			steps := cfg.Modes[m]
			exits := map[string]int{}
			for _, s := range steps {
				exits[s.Path] = 3
			}
			err := n.run(cfg, dir, m, exits)
			if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("step %s exited with code 3", steps[0].Name)) {
				t.Errorf("%s with every step exiting 3: %v", m, err)
			}
			if len(steps) > 1 && steps[0].Path != steps[1].Path {
				if err := n.run(cfg, dir, m, map[string]int{steps[1].Path: 1}); err == nil {
					t.Errorf("%s with its second step failing passed", m)
				}
			}
		}
		n.checkHistory()
	})

	// expected_config_files: without one of them every mode but the
	// uninstall ones fails before a step runs, naming it.
	if cfg, _ := pkgconfig.Parse(data); len(cfg.ExpectedConfigFiles) > 0 {
		t.Run("expected-config-files", func(t *testing.T) {
			n := newNode(t, name)
			cfg, dir := n.install(data)
			missing := cfg.ExpectedConfigFiles[len(cfg.ExpectedConfigFiles)-1]
			if err := os.Remove(filepath.Join(n.configMaps, missing)); err != nil {
				t.Fatal(err)
			}
			for _, m := range modesOf(cfg, all) {
				err := n.run(cfg, dir, m, nil)
				if strings.HasPrefix(m, "uninstall") {
					if err != nil {
						t.Errorf("%s: %v", m, err)
					}
				} else if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("expected config file %q", missing)) {
					t.Errorf("%s without configmaps/%s: %v", m, missing, err)
				}
			}
		})
	}

	// The uninstall modes do not copy root_dir over the host; the others do.
	t.Run("root_dir", func(t *testing.T) {
		n := newNode(t, name)
		cfg, dir := n.install(data)
		marker := filepath.Join(n.root, "etc/skyhook-test", name)
		for _, m := range modesOf(cfg, all) {
			_ = os.Remove(marker)
			if err := n.run(cfg, dir, m, nil); err != nil {
				t.Fatalf("%s: %v", m, err)
			}
			_, err := os.Stat(marker)
			if copied := err == nil; copied == strings.HasPrefix(m, "uninstall") {
				t.Errorf("%s: root_dir copied: %v", m, copied)
			}
		}
	})
}

// checkHistory compares the package's history on the node with the model's.
func (n *node) checkHistory() {
	n.t.Helper()
	hist, ok := host{root: n.root, skyhook: "demo", state: DefaultStateDir}.history(n.name)
	switch {
	case n.nw.history == nil && ok:
		n.t.Errorf("a history (%+v) where NodeWright's agent writes none", hist)
	case n.nw.history != nil && (!ok || hist.Current != *n.nw.history):
		n.t.Errorf("history %+v (found: %v); NodeWright's agent leaves current-version %q", hist, ok, *n.nw.history)
	}
}

// A few of the model's answers written out, so that they do not rest on
// the model alone: shellscript's steps get their mode as argument; a rerun
// of nvidia-tuned's config runs its run-once "prepare" step again (config
// never skips); tuned's upgrade without a history says "unknown".
func TestNVIDIAPackagesSpotChecks(t *testing.T) {
	load := func(name string) []byte {
		data, err := os.ReadFile(filepath.Join(referencePackages, name, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	n := newNode(t, "shellscript")
	_, dir := n.install(load("shellscript"))
	var out bytes.Buffer
	if _, err := Run(context.Background(), Options{Mode: "config", HostRoot: n.root, CopyDir: dir, ConfigMapDir: n.configMaps,
		Skyhook: "demo", Package: "shellscript", Version: "1.1.1", Generation: "1", Env: []string{"PATH=/bin"}, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if calls := readCalls(t, n.root); len(calls) != 1 || !reflect.DeepEqual(calls[0].Args, []string{"config"}) ||
		calls[0].Cwd != "/var/lib/skyhook/demo/shellscript/1.1.1/1" {
		t.Errorf("shellscript config: %v", calls)
	}

	n = newNode(t, "nvidia-tuned")
	cfg, dir := n.install(load("nvidia-tuned"))
	for range 2 {
		if _, err := Run(context.Background(), Options{Mode: "config", HostRoot: n.root, CopyDir: dir, ConfigMapDir: n.configMaps,
			Skyhook: "demo", Package: "nvidia-tuned", Version: cfg.PackageVersion, Generation: "1", Env: []string{"PATH=/bin"}, Out: &out}); err != nil {
			t.Fatal(err)
		}
	}
	var paths []string
	for _, c := range readCalls(t, n.root) {
		paths = append(paths, c.Path)
	}
	if want := "prepare_nvidia_profiles.sh apply_tuned_profile.sh prepare_nvidia_profiles.sh apply_tuned_profile.sh"; strings.Join(paths, " ") != want {
		t.Errorf("nvidia-tuned config twice ran %v, want %s", paths, want)
	}

	n = newNode(t, "tuned")
	cfg, dir = n.install(load("tuned"))
	if _, err := Run(context.Background(), Options{Mode: "upgrade", HostRoot: n.root, CopyDir: dir, ConfigMapDir: n.configMaps,
		Skyhook: "demo", Package: "tuned", Version: cfg.PackageVersion, Generation: "1", Env: []string{"PATH=/bin"}, Out: &out}); err != nil {
		t.Fatal(err)
	}
	if calls := readCalls(t, n.root); len(calls) != 1 || calls[0].Env["PREVIOUS_VERSION"] != "unknown" || calls[0].Env["CURRENT_VERSION"] != "1.0.0" {
		t.Errorf("tuned upgrade without a history: %v", calls)
	}
}
