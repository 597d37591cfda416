// Package pkgconfig reads and checks a package's config.json (schema
// version v1): the steps of each lifecycle mode. The format is the
// reference system's, so existing packages load as they are; the JSON
// Schema in schema/config.v1.json describes the same rules for other tools.
package pkgconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/Masterminds/semver/v3"
)

// The modes a config.json may define, action modes with their check modes.
var (
	// ActionModes are the modes that change the host; each needs its check
	// mode when it has steps.
	ActionModes = []string{"apply", "config", "upgrade", "uninstall", "post-interrupt"}
	// Modes are every mode a config.json may define.
	Modes = []string{"apply", "apply-check", "config", "config-check", "upgrade", "upgrade-check",
		"uninstall", "uninstall-check", "post-interrupt", "post-interrupt-check"}
)

// Config is a package's config.json.
type Config struct {
	SchemaVersion       string            `json:"schema_version"`
	PackageName         string            `json:"package_name"`
	PackageVersion      string            `json:"package_version"`
	ExpectedConfigFiles []string          `json:"expected_config_files"`
	Modes               map[string][]Step `json:"modes"`
}

// Step is one executable of a mode.
type Step struct {
	Name string `json:"name"`
	// Path is relative to the package's skyhook_dir.
	Path string `json:"path"`
	// Arguments; "env:NAME" is replaced by the variable's value.
	Arguments []string `json:"arguments"`
	// Returncodes are the exit codes that mean success.
	Returncodes []int `json:"returncodes"`
	// OnHost runs the step chrooted into the host root.
	OnHost bool `json:"on_host"`
	// Env is added to the step's environment.
	Env map[string]string `json:"env"`
	// Idempotence says the step may run again; false runs it once per
	// package version (and again for a new generation).
	Idempotence bool `json:"idempotence"`
	// UpgradeStep marks a step of an upgrade mode that gets the previous
	// and current versions.
	UpgradeStep bool `json:"upgrade_step"`
}

// Problem is one thing wrong with a config, where it is and why.
type Problem struct {
	// Field is where, as in "modes.apply[0].path".
	Field string
	// Message says what rule it breaks.
	Message string
}

func (p Problem) String() string {
	if p.Field == "" {
		return p.Message
	}
	return p.Field + ": " + p.Message
}

// Problems are all that is wrong with a config.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// Load reads a config.json: from dir/config.json when path is a directory.
// It returns the config and every problem found in it, the files it names
// included; err is for a file that cannot be read at all.
func Load(path string) (*Config, Problems, error) {
	return load(path, true)
}

// load is Load, with the step files checked or not.
func load(path string, checkFiles bool) (*Config, Problems, error) {
	dir, file := path, path
	if info, err := os.Stat(path); err != nil {
		return nil, nil, err
	} else if info.IsDir() {
		file = filepath.Join(path, "config.json")
	} else {
		dir = filepath.Dir(path)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	cfg, problems := Parse(data)
	if cfg != nil && len(problems) == 0 && checkFiles {
		problems = append(problems, CheckFiles(cfg, dir)...)
	}
	return cfg, problems, nil
}

// Parse decodes a config.json and checks it (everything but the files).
func Parse(data []byte) (*Config, Problems) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, Problems{{Message: "not a JSON object: " + err.Error()}}
	}
	problems := knownFields(raw, []string{"schema_version", "package_name", "package_version", "expected_config_files", "modes"}, "")
	for _, required := range []string{"schema_version", "package_name", "package_version", "modes"} {
		if _, ok := raw[required]; !ok {
			problems = append(problems, Problem{Field: required, Message: "is required"})
		}
	}
	cfg := &Config{}
	problems = append(problems, decodeField(raw, "schema_version", &cfg.SchemaVersion, "a string")...)
	problems = append(problems, decodeField(raw, "package_name", &cfg.PackageName, "a string")...)
	problems = append(problems, decodeField(raw, "package_version", &cfg.PackageVersion, "a string")...)
	problems = append(problems, decodeField(raw, "expected_config_files", &cfg.ExpectedConfigFiles, "a list of strings")...)
	var modes map[string]json.RawMessage
	problems = append(problems, decodeField(raw, "modes", &modes, "an object of modes")...)
	cfg.Modes = map[string][]Step{}
	for _, mode := range slices.Sorted(maps.Keys(modes)) {
		steps, ps := parseSteps(modes[mode], "modes."+mode)
		problems = append(problems, ps...)
		cfg.Modes[mode] = steps
	}
	if len(problems) > 0 {
		return cfg, problems
	}
	return cfg, Check(cfg)
}

// parseSteps decodes a mode's list of steps, reporting unknown and
// missing fields and wrong types by step.
func parseSteps(data json.RawMessage, field string) ([]Step, Problems) {
	var list []map[string]json.RawMessage
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, Problems{{Field: field, Message: "must be a list of steps"}}
	}
	var problems Problems
	steps := make([]Step, len(list))
	for i, raw := range list {
		at := fmt.Sprintf("%s[%d]", field, i)
		problems = append(problems, knownFields(raw, []string{"name", "path", "arguments", "returncodes", "on_host", "env", "idempotence", "upgrade_step"}, at+".")...)
		for _, required := range []string{"name", "path"} {
			if _, ok := raw[required]; !ok {
				problems = append(problems, Problem{Field: at + "." + required, Message: "is required"})
			}
		}
		s := Step{Returncodes: []int{0}, OnHost: true, Idempotence: true}
		for _, f := range []struct {
			name, kind string
			into       any
		}{
			{"name", "a string", &s.Name}, {"path", "a string", &s.Path}, {"arguments", "a list of strings", &s.Arguments},
			{"returncodes", "a list of integers", &s.Returncodes}, {"on_host", "true or false", &s.OnHost},
			{"env", "an object of strings", &s.Env}, {"idempotence", "true or false", &s.Idempotence},
			{"upgrade_step", "true or false", &s.UpgradeStep},
		} {
			problems = append(problems, prefixed(decodeField(raw, f.name, f.into, f.kind), at+".")...)
		}
		steps[i] = s
	}
	return steps, problems
}

var (
	// packageName is NodeWright's rule (any string) narrowed to what is safe
	// as one path segment: the name names the package's flag and history
	// files. NVIDIA's packages use underscores and capitals.
	packageName = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_.]{0,252}$`)
	envName     = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	stepName    = regexp.MustCompile(`^[A-Za-z0-9][-A-Za-z0-9_.]*$`)
	configKey   = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
)

// Check applies the rules of a decoded config (not its files).
func Check(cfg *Config) Problems {
	var problems Problems
	add := func(field, format string, args ...any) {
		problems = append(problems, Problem{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if cfg.SchemaVersion != "v1" {
		add("schema_version", "must be \"v1\", got %q", cfg.SchemaVersion)
	}
	if !packageName.MatchString(cfg.PackageName) {
		add("package_name", "%q must match %s", cfg.PackageName, packageName)
	}
	if _, err := semver.NewVersion(cfg.PackageVersion); err != nil {
		add("package_version", "%q is not a semantic version", cfg.PackageVersion)
	}
	for i, f := range cfg.ExpectedConfigFiles {
		if !configKey.MatchString(f) {
			add(fmt.Sprintf("expected_config_files[%d]", i), "%q is not a configMap key (letters, digits, '-', '_', '.')", f)
		}
	}
	for _, mode := range slices.Sorted(maps.Keys(cfg.Modes)) {
		if !slices.Contains(Modes, mode) {
			add("modes."+mode, "is not a mode (%s)", strings.Join(Modes, ", "))
			continue
		}
		problems = append(problems, checkSteps(mode, cfg.Modes[mode])...)
	}
	for _, mode := range ActionModes {
		if len(cfg.Modes[mode]) > 0 && len(cfg.Modes[mode+"-check"]) == 0 {
			add("modes."+mode+"-check", "is required: mode %s has steps, and every action mode with steps needs its check mode", mode)
		}
	}
	return problems
}

func checkSteps(mode string, steps []Step) Problems {
	var problems Problems
	seen := map[string]int{}
	for i, s := range steps {
		at := fmt.Sprintf("modes.%s[%d]", mode, i)
		add := func(field, format string, args ...any) {
			problems = append(problems, Problem{Field: at + "." + field, Message: fmt.Sprintf(format, args...)})
		}
		if !stepName.MatchString(s.Name) {
			add("name", "%q must match %s", s.Name, stepName)
		} else if first, dup := seen[s.Name]; dup {
			add("name", "%q is also the name of step %d; step names are unique within a mode (they key the run-once flags)", s.Name, first)
		} else {
			seen[s.Name] = i
		}
		if s.Path == "" || filepath.IsAbs(s.Path) || escapes(s.Path) {
			add("path", "%q must be a relative path inside skyhook_dir", s.Path)
		}
		for j, a := range s.Arguments {
			if name, ok := strings.CutPrefix(a, "env:"); ok && !envName.MatchString(name) {
				add(fmt.Sprintf("arguments[%d]", j), "%q: %q is not an environment variable name", a, name)
			}
		}
		if len(s.Returncodes) == 0 {
			add("returncodes", "must list at least one exit code that means success")
		}
		for j, code := range s.Returncodes {
			if code < 0 || code > 255 {
				add(fmt.Sprintf("returncodes[%d]", j), "%d is not an exit code (0-255)", code)
			}
		}
		for _, k := range slices.Sorted(maps.Keys(s.Env)) {
			if !envName.MatchString(k) {
				add("env."+k, "is not an environment variable name")
			}
		}
		if s.UpgradeStep && mode != "upgrade" && mode != "upgrade-check" {
			add("upgrade_step", "is only allowed in the upgrade and upgrade-check modes")
		}
	}
	return problems
}

// CheckFiles checks that every step's path is a file in dir/skyhook_dir.
// Its mode is not checked: the agent adds the execute bits before it runs
// a step, as NodeWright's agent does (agent/run), so a package whose
// scripts lack them runs here as it runs there.
func CheckFiles(cfg *Config, dir string) Problems {
	var problems Problems
	for _, mode := range slices.Sorted(maps.Keys(cfg.Modes)) {
		for i, s := range cfg.Modes[mode] {
			at := fmt.Sprintf("modes.%s[%d].path", mode, i)
			path := filepath.Join(dir, "skyhook_dir", s.Path)
			info, err := os.Stat(path)
			switch {
			case err != nil:
				problems = append(problems, Problem{Field: at, Message: fmt.Sprintf("%q: no such file in %s", s.Path, filepath.Join(dir, "skyhook_dir"))})
			case info.IsDir():
				problems = append(problems, Problem{Field: at, Message: fmt.Sprintf("%q is a directory, not an executable", s.Path)})
			}
		}
	}
	return problems
}

// knownFields reports the fields of raw that are not in known.
func knownFields(raw map[string]json.RawMessage, known []string, prefix string) Problems {
	var problems Problems
	for _, k := range slices.Sorted(maps.Keys(raw)) {
		if !slices.Contains(known, k) {
			problems = append(problems, Problem{Field: prefix + k, Message: "is not a field of config.json v1 (known: " + strings.Join(known, ", ") + ")"})
		}
	}
	return problems
}

// decodeField decodes raw[name] into into, strictly, when present.
func decodeField(raw map[string]json.RawMessage, name string, into any, kind string) Problems {
	data, ok := raw[name]
	if !ok {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return Problems{{Field: name, Message: "must be " + kind}}
	}
	return nil
}

func prefixed(ps Problems, prefix string) Problems {
	for i := range ps {
		ps[i].Field = prefix + ps[i].Field
	}
	return ps
}

func escapes(p string) bool {
	clean := filepath.Clean(p)
	return clean == ".." || strings.HasPrefix(clean, "../")
}

// Report loads the package at path (a directory or its config.json) and
// writes every problem, one a line with its location, or that it is valid;
// with checkFiles false, the step files it names are not looked for (a
// config.json checked on its own). It returns false when the package has problems or cannot be read.
func Report(w io.Writer, path string, checkFiles bool) bool {
	_, problems, err := load(path, checkFiles)
	if err != nil {
		fmt.Fprintf(w, "%s: %v\n", path, err)
		return false
	}
	for _, p := range problems {
		fmt.Fprintf(w, "%s: %s\n", path, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(w, "%s: %d problems\n", path, len(problems))
		return false
	}
	fmt.Fprintf(w, "%s: valid\n", path)
	return true
}
