package validate

import (
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/test/testenv"
)

func skyhookFrom(t testing.TB, spec string) *skyhookv1.Skyhook {
	t.Helper()
	sk := &skyhookv1.Skyhook{}
	if err := yaml.UnmarshalStrict([]byte("metadata: {name: test}\nspec:\n"+spec), sk); err != nil {
		t.Fatal(err)
	}
	return withSchemaDefaults(sk)
}

// withSchemaDefaults gives sk what the CRD schema defaults before admission
// sees an object: the priority (the specs here do not write one).
func withSchemaDefaults(sk *skyhookv1.Skyhook) *skyhookv1.Skyhook {
	if sk.Spec.Priority == 0 {
		sk.Spec.Priority = skyhookv1.DefaultPriority
	}
	return sk
}

// A priority below 1 is refused (the schema defaults an absent one to 200,
// so a 0 here was written).
func TestSkyhookPriorityBelowOne(t *testing.T) {
	sk := skyhookFrom(t, "  {}\n")
	for _, p := range []int{0, -3} {
		sk.Spec.Priority = p
		requireErrors(t, Skyhook(sk, nil), "spec.priority: Invalid value: "+strconv.Itoa(p)+": must be at least 1")
	}
}

func policies(names ...string) PolicyExists {
	return func(name string) (bool, error) {
		for _, n := range names {
			if n == name {
				return true, nil
			}
		}
		return false, nil
	}
}

// requireErrors asserts that errs holds exactly the wanted "field: message
// fragment" entries, in any order.
func requireErrors(t *testing.T, errs field.ErrorList, want ...string) {
	t.Helper()
	var got []string
	for _, e := range errs {
		got = append(got, e.Error())
	}
	if len(got) != len(want) {
		t.Fatalf("got %d errors, want %d:\n  %s", len(got), len(want), strings.Join(got, "\n  "))
	}
	for _, w := range want {
		found := false
		for _, g := range got {
			if strings.HasPrefix(g, strings.SplitN(w, ": ", 2)[0]+":") && strings.Contains(g, strings.SplitN(w, ": ", 2)[1]) {
				found = true
			}
		}
		if !found {
			t.Errorf("no error %q among:\n  %s", w, strings.Join(got, "\n  "))
		}
	}
}

func TestSkyhookValidation(t *testing.T) {
	cases := []struct {
		name string
		spec string
		want []string
	}{
		{"valid", `
  interruptionBudget: {percent: 50}
  packages:
    alpha: {version: "1.2", image: "registry:5000/pkgs/a"}
    bravo: {version: 2024.05.10, image: "nvcr.io/x/b:2024.05.10", dependsOn: {alpha: "1.2"}}
`, nil},
		{"everything wrong at once", `
  interruptionBudget: {percent: 10, count: 1}
  packages:
    alpha: {name: bravo, version: latest, image: "ghcr.io/x/a:1.0.0"}
`, []string{
			"spec.interruptionBudget: percent and count are mutually exclusive",
			"spec.packages.alpha.name: must equal the package's key \"alpha\"",
			"spec.packages.alpha.version: must be a semantic version",
		}},
		{"slash date is no version", `
  packages:
    alpha: {version: 2024/07/06, image: ghcr.io/x/a}
`, []string{"spec.packages.alpha.version: must be a semantic version"}},
		{"a tag that disagrees with the version is accepted (the mutator drops it, as NodeWright runs the version)", `
  packages:
    alpha: {version: 1.0.1, image: "registry:5000/x/a:1.0.0"}
`, nil},
		{"uninstall.apply without enabled", `
  packages:
    alpha: {version: 1.0.1, image: ghcr.io/x/a, uninstall: {apply: true}}
`, []string{"spec.packages.alpha.uninstall.apply: Invalid value: true: uninstall.apply requires uninstall.enabled: true"}},
		{"v-prefixed tag of the same version", `
  packages:
    alpha: {version: "1.2", image: "ghcr.io/x/a:v1.2.0"}
`, nil},
		{"registry port is not a tag", `
  packages:
    alpha: {version: 3.0.0, image: "registry.local:5000/a"}
`, nil},
		{"digest disagrees with containerSHA", `
  packages:
    alpha: {version: 1.0.0, image: "ghcr.io/x/a@sha256:1111111111111111111111111111111111111111111111111111111111111111", containerSHA: "sha256:2222222222222222222222222222222222222222222222222222222222222222"}
`, []string{"spec.packages.alpha.containerSHA: disagrees with the digest"}},
		{"policy missing and budget beside it", `
  deploymentPolicy: nope
  interruptionBudget: {count: 1}
`, []string{
			"spec.interruptionBudget: deploymentPolicy and interruptionBudget are mutually exclusive",
			`spec.deploymentPolicy: Invalid value: "nope": deploymentPolicy "nope" not found`,
		}},
		{"selectors that do not parse", `
  nodeSelectors:
    matchLabels: {"bad key!": x}
  podNonInterruptLabels:
    matchExpressions: [{key: app, operator: Maybe}]
`, []string{
			"spec.nodeSelectors.matchLabels: Invalid value",
			"spec.podNonInterruptLabels.matchExpressions[0].operator: Invalid value",
		}},
		{"config interrupts", `
  packages:
    alpha:
      version: 1.0.0
      image: ghcr.io/x/a
      configMap: {"vars.sh": "x", "extra.conf": "y"}
      configInterrupts:
        "*.sh": {type: service, services: [cron]}
        "*.conf": {type: reboot}
        "missing.txt": {type: reboot}
        "other": {type: service}
        "[": {type: noop}
`, []string{
			"spec.packages.alpha.configInterrupts[missing.txt]: matches no key of configMap",
			"spec.packages.alpha.configInterrupts[other]: matches no key of configMap",
			"spec.packages.alpha.configInterrupts[other].services: a service interrupt needs at least one service",
			"spec.packages.alpha.configInterrupts[[]: not a valid glob",
		}},
		{"service interrupt without services", `
  packages:
    alpha: {version: 1.0.0, image: ghcr.io/x/a, interrupt: {type: service}}
`, []string{"spec.packages.alpha.interrupt.services: a service interrupt needs at least one service"}},
		{"service names systemctl would read as options or paths", `
  packages:
    alpha: {version: 1.0.0, image: ghcr.io/x/a, interrupt: {type: service, services: [--now, ok.service, a/b]}}
`, []string{
			"spec.packages.alpha.interrupt.services[0]: Invalid value: \"--now\": must be a systemd unit name, which does not start with '-'",
			"spec.packages.alpha.interrupt.services[2]: Invalid value: \"a/b\": must be a systemd unit name",
		}},
		{"resources", `
  packages:
    alpha: {version: 1.0.0, image: ghcr.io/x/a, resources: {cpuRequest: 500m, cpuLimit: 100m, memoryRequest: 1Gi, memoryLimit: 512Mi}}
    bravo: {version: 1.0.0, image: ghcr.io/x/b, resources: {cpuRequest: 100m}}
    charlie: {version: 1.0.0, image: ghcr.io/x/c, resources: {cpuRequest: "-1", cpuLimit: 1, memoryRequest: 1Mi, memoryLimit: 1Mi}}
`, []string{
			"spec.packages.alpha.resources.cpuLimit: must be at least cpuRequest (500m)",
			"spec.packages.alpha.resources.memoryLimit: must be at least memoryRequest (1Gi)",
			"spec.packages.bravo.resources: set all four",
			"spec.packages.charlie.resources.cpuRequest: must be greater than 0",
		}},
		{"dependsOn", `
  packages:
    alpha: {version: 1.0.0, image: ghcr.io/x/a, dependsOn: {ghost: 1.0.0, bravo: "", charlie: 9.9.9}}
    bravo: {version: 1.0.0, image: ghcr.io/x/b}
    charlie: {version: 2.0.0, image: ghcr.io/x/c}
`, []string{
			`spec.packages.alpha.dependsOn.ghost: Not found: "ghost"`,
			"spec.packages.alpha.dependsOn.bravo: Required value: the version of bravo (1.0.0)",
			"spec.packages.alpha.dependsOn.charlie: package charlie has version 2.0.0 in this Skyhook",
		}},
		{"dependency cycle", `
  packages:
    alpha: {version: 1.0.0, image: ghcr.io/x/a, dependsOn: {bravo: 1.0.0}}
    bravo: {version: 1.0.0, image: ghcr.io/x/b, dependsOn: {charlie: 1.0.0}}
    charlie: {version: 1.0.0, image: ghcr.io/x/c, dependsOn: {alpha: 1.0.0}}
`, []string{`spec.packages.alpha.dependsOn: Invalid value: "alpha -> bravo -> charlie -> alpha": dependsOn forms a cycle`}},
		{"self dependency", `
  packages:
    alpha: {version: 1.0.0, image: ghcr.io/x/a, dependsOn: {alpha: 1.0.0}}
`, []string{`spec.packages.alpha.dependsOn: Invalid value: "alpha -> alpha": dependsOn forms a cycle`}},
		{"tolerations a pod would reject", `
  additionalTolerations:
  - {key: nvidia.com/gpu, operator: Exists, value: "yes"}
  - {operator: Equal, value: x}
  - {key: a, operator: Sometimes}
  - {key: b, effect: NoSchedule, tolerationSeconds: 5}
  - {key: c, effect: Never}
`, []string{
			"spec.additionalTolerations[0].value: must be empty when operator is Exists",
			"spec.additionalTolerations[1].operator: an empty key needs operator Exists",
			`spec.additionalTolerations[2].operator: Unsupported value: "Sometimes"`,
			"spec.additionalTolerations[3].tolerationSeconds: only allowed with effect NoExecute",
			`spec.additionalTolerations[4].effect: Unsupported value: "Never"`,
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			requireErrors(t, Skyhook(skyhookFrom(t, tc.spec), policies("gpu-rollout")), tc.want...)
		})
	}
}

func TestSkyhookNameLength(t *testing.T) {
	sk := skyhookFrom(t, "  {}\n")
	sk.Name = strings.Repeat("x", skyhookv1.MaxSkyhookNameLength)
	requireErrors(t, Skyhook(sk, nil))
	sk.Name += "x"
	requireErrors(t, Skyhook(sk, nil), "metadata.name: may have at most 53 characters (has 54)")
}

// The reference system's manifests are valid as they are.
func TestSeedExamplesAreValid(t *testing.T) {
	for name, data := range testenv.SeedExamples(t) {
		sk := &skyhookv1.Skyhook{}
		if err := yaml.UnmarshalStrict(data, sk); err != nil {
			t.Fatal(err)
		}
		if errs := Skyhook(withSchemaDefaults(sk), policies()); len(errs) > 0 {
			t.Errorf("%s: %v", name, errs.ToAggregate())
		}
	}
}

func FuzzSkyhook(f *testing.F) {
	f.Add([]byte(`{"metadata":{"name":"x"},"spec":{"packages":{"a":{"version":"1.0","image":"r:5000/a:1.0","dependsOn":{"a":"1.0"},"configInterrupts":{"[":{"type":"service"}},"resources":{"cpuRequest":"1","cpuLimit":"0"}}}}}`))
	f.Add([]byte(`{"spec":{"interruptionBudget":{"percent":-1,"count":-5},"nodeSelectors":{"matchExpressions":[{"key":"","operator":"In"}]},"additionalTolerations":[{"effect":"x","tolerationSeconds":1}]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		sk := &skyhookv1.Skyhook{}
		if err := yaml.Unmarshal(data, sk); err != nil {
			return
		}
		requireNamedErrors(t, Skyhook(sk, policies("p")))
	})
}

// requireNamedErrors fails unless every error names a field of the object
// (under spec or metadata) and says what is wrong with it.
func requireNamedErrors(t *testing.T, errs field.ErrorList) {
	t.Helper()
	for _, e := range errs {
		if e.Field == "" || !(strings.HasPrefix(e.Field, "spec") || strings.HasPrefix(e.Field, "metadata")) {
			t.Fatalf("an error that names no field of the object: %#v", e)
		}
		if e.Type == "" || e.ErrorBody() == "" {
			t.Fatalf("an error that says nothing: %#v", e)
		}
	}
}
