package pkgconfig

import (
	"encoding/json"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// testdataPackages are the reference packages, which must load unchanged.
func testdataPackages(t testing.TB) map[string][]byte {
	t.Helper()
	shared, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, name := range []string{"shellscript", "tuned", "tuning"} {
		data, err := os.ReadFile(filepath.Join(shared, "testdata", "packages", name, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		out[name] = data
	}
	return out
}

// packageDir lays a config.json out as a package, with an executable stub
// for every step path it names.
func packageDir(t *testing.T, config []byte) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), config, 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, problems := Parse(config)
	if len(problems) > 0 {
		t.Fatalf("the config does not parse: %v", problems)
	}
	for _, steps := range cfg.Modes {
		for _, s := range steps {
			p := filepath.Join(dir, "skyhook_dir", s.Path)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte("#!/bin/sh\nexit 0\n"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

func TestTestdataPackagesLoadUnchanged(t *testing.T) {
	schema, err := CompileSchema()
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range testdataPackages(t) {
		dir := packageDir(t, data)
		cfg, problems, err := Load(dir)
		if err != nil || len(problems) > 0 {
			t.Errorf("%s: %v %v", name, err, problems)
			continue
		}
		if cfg.PackageName != name || len(cfg.Modes) == 0 {
			t.Errorf("%s: loaded %+v", name, cfg)
		}
		if !ValidAgainst(schema, data) {
			t.Errorf("%s: the JSON Schema rejects a reference package", name)
		}
	}
}

// Every config.json of NVIDIA's official packages (test/reference/
// skyhook-packages) loads as a package, with stub steps, and the JSON
// Schema accepts it; their names have underscores.
func TestNVIDIAPackagesValidate(t *testing.T) {
	ref, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(ref, "skyhook-packages", "*", "config.json"))
	if err != nil || len(files) != 7 {
		t.Fatalf("%d configs of NVIDIA's packages, want the 7 kept (%v)", len(files), err)
	}
	schema, err := CompileSchema()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, problems, err := Load(packageDir(t, data)); err != nil || len(problems) > 0 {
			t.Errorf("%s: %v %v", f, err, problems)
		}
		if !ValidAgainst(schema, data) {
			t.Errorf("%s: the JSON Schema rejects it", f)
		}
	}
}

// mutate applies change to the shellscript package's config.
func mutate(t *testing.T, change func(map[string]any)) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(testdataPackages(t)["shellscript"], &doc); err != nil {
		t.Fatal(err)
	}
	change(doc)
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func step(doc map[string]any, mode string, i int) map[string]any {
	return doc["modes"].(map[string]any)[mode].([]any)[i].(map[string]any)
}

// Every broken config is rejected with the field and the rule, and the
// JSON Schema rejects it too (but for the rules a schema cannot express).
// NodeWright's package names are any string; NVIDIA's own packages use
// underscores and capitals, which the agent accepts.
func TestNodeWrightPackageNamesAreAccepted(t *testing.T) {
	for _, name := range []string{"nvidia_tuned", "kdump_setup", "GPU-Operator.prep", "ab", "x"} {
		cfg := &Config{SchemaVersion: "v1", PackageName: name, PackageVersion: "1.0.0"}
		for _, p := range Check(cfg) {
			if p.Field == "package_name" {
				t.Errorf("%q refused: %s", name, p.Message)
			}
		}
	}
}

func TestBrokenConfigsAreRejectedPrecisely(t *testing.T) {
	schema, err := CompileSchema()
	if err != nil {
		t.Fatal(err)
	}
	modes := func(d map[string]any) map[string]any { return d["modes"].(map[string]any) }
	cases := []struct {
		name      string
		change    func(map[string]any)
		want      string
		schemaToo bool
	}{
		{"schema version", func(d map[string]any) { d["schema_version"] = "v2" }, `schema_version: must be "v1"`, true},
		{"missing name", func(d map[string]any) { delete(d, "package_name") }, "package_name: is required", true},
		{"name that escapes a path", func(d map[string]any) { d["package_name"] = "../etc" }, `package_name: "../etc" must match`, true},
		{"name with a slash", func(d map[string]any) { d["package_name"] = "a/b" }, `package_name: "a/b" must match`, true},
		{"bad version", func(d map[string]any) { d["package_version"] = "one" }, `package_version: "one" is not a semantic version`, true},
		{"unknown field", func(d map[string]any) { d["flavour"] = "x" }, "flavour: is not a field of config.json v1", true},
		{"unknown mode", func(d map[string]any) { modes(d)["install"] = []any{} }, "modes.install: is not a mode", true},
		{"wrong type", func(d map[string]any) { step(d, "apply", 0)["returncodes"] = "0" }, "modes.apply[0].returncodes: must be a list of integers", true},
		{"bool as string", func(d map[string]any) { step(d, "config", 0)["idempotence"] = "yes" }, "modes.config[0].idempotence: must be true or false", true},
		{"step without path", func(d map[string]any) { delete(step(d, "apply", 0), "path") }, "modes.apply[0].path: is required", true},
		{"unknown step field", func(d map[string]any) { step(d, "apply", 0)["timeout"] = 5 }, "modes.apply[0].timeout: is not a field", true},
		{"path escapes", func(d map[string]any) { step(d, "apply", 0)["path"] = "../../bin/sh" }, `modes.apply[0].path: "../../bin/sh" must be a relative path inside skyhook_dir`, true},
		{"absolute path", func(d map[string]any) { step(d, "apply", 0)["path"] = "/bin/sh" }, `modes.apply[0].path: "/bin/sh" must be a relative path`, true},
		{"no return codes", func(d map[string]any) { step(d, "apply", 0)["returncodes"] = []any{} }, "modes.apply[0].returncodes: must list at least one exit code", true},
		{"return code out of range", func(d map[string]any) { step(d, "apply", 0)["returncodes"] = []any{0, 300} }, "modes.apply[0].returncodes[1]: 300 is not an exit code", true},
		{"bad env argument", func(d map[string]any) { step(d, "apply", 0)["arguments"] = []any{"env:1BAD"} }, `modes.apply[0].arguments[0]: "env:1BAD": "1BAD" is not an environment variable name`, true},
		{"bad env name", func(d map[string]any) { step(d, "apply", 0)["env"] = map[string]any{"A-B": "x"} }, "modes.apply[0].env.A-B: is not an environment variable name", true},
		{"check mode missing", func(d map[string]any) { delete(modes(d), "config-check") }, "modes.config-check: is required: mode config has steps", true},
		{"upgrade step outside upgrade", func(d map[string]any) { step(d, "apply", 0)["upgrade_step"] = true }, "modes.apply[0].upgrade_step: is only allowed in the upgrade and upgrade-check modes", true},
		{"duplicate step names", func(d map[string]any) {
			m := modes(d)
			m["apply"] = append(m["apply"].([]any), step(d, "apply", 0))
		}, `modes.apply[1].name: "apply" is also the name of step 0`, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			data := mutate(t, tc.change)
			_, problems := Parse(data)
			if !strings.Contains(problems.Error(), tc.want) {
				t.Errorf("problems:\n%v\nwant one with %q", problems.Error(), tc.want)
			}
			if tc.schemaToo && ValidAgainst(schema, data) {
				t.Error("the JSON Schema accepts what the agent rejects")
			}
		})
	}
}

func TestFilesAreChecked(t *testing.T) {
	data := testdataPackages(t)["tuning"]
	dir := packageDir(t, data)
	if err := os.Chmod(filepath.Join(dir, "skyhook_dir", "update_settings.sh"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "skyhook_dir", "update_settings_check.sh")); err != nil {
		t.Fatal(err)
	}
	_, problems, err := Load(filepath.Join(dir, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	got := problems.Error()
	if want := `modes.config-check[0].path: "update_settings_check.sh": no such file in`; !strings.Contains(got, want) {
		t.Errorf("problems:\n%s\nwant %q", got, want)
	}
	// The agent makes a step executable before running it, as NodeWright's
	// does: a step without the execute bits is no problem.
	if strings.Contains(got, "update_settings.sh") {
		t.Errorf("a step without execute bits is reported:\n%s", got)
	}
}

// The loader takes any input without panicking and without accepting a
// config it cannot read back.
func FuzzParse(f *testing.F) {
	// Small seeds: with the reference packages (a few KB each) as seeds the
	// fuzzer's workers made no progress on this machine.
	f.Add([]byte(`{"schema_version":"v1","package_name":"tuning","package_version":"1.1.4","expected_config_files":["a.conf"],"modes":{"config":[{"name":"config","path":"s.sh","arguments":["env:X"],"returncodes":[0,3],"on_host":true,"env":{"A":"b"},"idempotence":false,"upgrade_step":false}],"config-check":[{"name":"c","path":"c.sh"}]}}`))
	f.Add([]byte(`{"schema_version":"v1","package_name":"ab","package_version":"1","modes":{"apply":[{"name":"a","path":"x"}]}}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, problems := Parse(data)
		if len(problems) == 0 && (cfg == nil || cfg.SchemaVersion != "v1") {
			t.Errorf("accepted without a v1 config: %s", data)
		}
	})
}

// What the agent accepts the JSON Schema accepts too, over many random
// mutations of the reference packages (a JSON Schema validator is too slow
// to run under the fuzzer's instrumentation, so this is a plain test).
func TestSchemaAcceptsWhatTheAgentAccepts(t *testing.T) {
	schema, err := CompileSchema()
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewSource(1))
	accepted := 0
	for _, base := range testdataPackages(t) {
		for range 2000 {
			data := append([]byte(nil), base...)
			for range 1 + r.Intn(3) {
				data[r.Intn(len(data))] = "0123456789abcdefxyz_-.:/ \\"[r.Intn(26)]
			}
			if _, problems := Parse(data); len(problems) == 0 {
				accepted++
				if !ValidAgainst(schema, data) {
					t.Fatalf("the agent accepts what the JSON Schema rejects:\n%s", data)
				}
			}
		}
	}
	if accepted == 0 {
		t.Fatal("no mutation was accepted; the test compared nothing")
	}
	t.Logf("%d accepted mutations agreed with the schema", accepted)
}
