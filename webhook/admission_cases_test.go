package webhook_test

import (
	"context"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// admissionCase is a manifest and what `kubectl apply` of it must do: pass
// (no fragments) or fail with every fragment in the message.
type admissionCase struct {
	name     string
	manifest string
	want     []string
}

func skyhook(spec string) string {
	return "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: Skyhook\nmetadata:\n  name: case\nspec:\n" + spec
}

func policyManifest(spec string) string {
	return "apiVersion: skyhook.nvidia.com/v1alpha1\nkind: DeploymentPolicy\nmetadata:\n  name: case\nspec:\n" + spec
}

// pkg is a Skyhook with one package "tuning" with the given fields.
func pkg(fields string) string {
	return skyhook("  packages:\n    tuning:\n" + indent(fields, "      "))
}

func indent(s, by string) string {
	lines := strings.Split(strings.Trim(s, "\n"), "\n")
	for i := range lines {
		lines[i] = by + strings.TrimLeft(lines[i], " \t")
	}
	return strings.Join(lines, "\n") + "\n"
}

const (
	okPkg   = "version: 1.0.0\nimage: ghcr.io/nvidia/tuning\n"
	webhook = "admission webhook \"validate-skyhook.nvidia.com\" denied the request"
	dpHook  = "admission webhook \"validate-deploymentpolicy.nvidia.com\" denied the request"
)

var skyhookCases = []admissionCase{
	{"version latest", pkg("version: latest\nimage: ghcr.io/nvidia/tuning"), []string{webhook, "spec.packages.tuning.version", "must be a semantic version"}},
	{"version with slashes", pkg("version: 2024/07/06\nimage: ghcr.io/nvidia/tuning"), []string{"spec.packages.tuning.version", "must be a semantic version"}},
	{"image tag disagrees with version (accepted with a warning, as upstream runs the version)", pkg("version: 1.0.1\nimage: ghcr.io/nvidia/tuning:1.0.0"), nil},
	{"uninstall.apply without enabled", pkg(okPkg + "uninstall: {apply: true}"), []string{"spec.packages[tuning].uninstall", "uninstall.apply requires uninstall.enabled"}},
	{"sequencing neither node nor all", skyhook("  sequencing: sometimes\n"), []string{"spec.sequencing", `Unsupported value: "sometimes"`, `"node"`, `"all"`}},
	{"sequencing all", skyhook("  sequencing: all\n"), nil},
	{"name field differs from key", pkg("name: other\n" + okPkg), []string{"spec.packages.tuning.name", `must equal the package's key "tuning"`}},
	{"priority 0 (upstream's schema refuses it too)", skyhook("  priority: 0\n"), []string{"spec.priority", "greater than or equal to 1"}},
	{"all resources zero", pkg(okPkg + "resources: {cpuRequest: 0, cpuLimit: \"0\", memoryRequest: 0Mi, memoryLimit: 0}"),
		[]string{webhook, "spec.packages.tuning.resources.cpuRequest", "spec.packages.tuning.resources.memoryLimit", "must be greater than 0"}},
	{"percent and count", skyhook("  interruptionBudget: {percent: 10, count: 1}\n"), []string{"spec.interruptionBudget", "percent and count are mutually exclusive"}},
	{"policy that does not exist", skyhook("  deploymentPolicy: nowhere\n"), []string{webhook, "spec.deploymentPolicy", `deploymentPolicy "nowhere" not found`}},
	{"policy beside a budget", skyhook("  deploymentPolicy: case-policy\n  interruptionBudget: {count: 1}\n"), []string{"deploymentPolicy and interruptionBudget are mutually exclusive"}},
	{"node selector that does not parse", skyhook("  nodeSelectors:\n    matchLabels: {\"bad key!\": x}\n"), []string{"spec.nodeSelectors.matchLabels", "name part must consist of"}},
	{"pod selector with a bad operator", skyhook("  podNonInterruptLabels:\n    matchExpressions: [{key: app, operator: Maybe}]\n"), []string{"spec.podNonInterruptLabels.matchExpressions[0].operator", "not a valid selector operator"}},
	{"config interrupt for no key", pkg(okPkg + "configMap: {vars.sh: x}\nconfigInterrupts: {\"*.conf\": {type: reboot}}"), []string{"spec.packages.tuning.configInterrupts[*.conf]", "matches no key of configMap"}},
	{"config interrupt glob matches", pkg(okPkg + "configMap: {vars.sh: x}\nconfigInterrupts: {\"*.sh\": {type: service, services: [cron]}}"), nil},
	{"service interrupt without services", pkg(okPkg + "interrupt: {type: service}"), []string{"a service interrupt needs at least one service"}},
	{"config service interrupt without services", pkg(okPkg + "configMap: {vars.sh: x}\nconfigInterrupts: {vars.sh: {type: service}}"), []string{"spec.packages[tuning].configInterrupts[vars.sh]", "a service interrupt needs at least one service"}},
	{"limit below request", pkg(okPkg + "resources: {cpuRequest: 500m, cpuLimit: 100m, memoryRequest: 64Mi, memoryLimit: 64Mi}"), []string{"spec.packages.tuning.resources.cpuLimit", "must be at least cpuRequest (500m)"}},
	{"zero resources", pkg(okPkg + "resources: {cpuRequest: 0, cpuLimit: 1, memoryRequest: 1Mi, memoryLimit: 1Mi}"), []string{"spec.packages.tuning.resources.cpuRequest", "must be greater than 0"}},
	{"negative resources", pkg(okPkg + "resources: {cpuRequest: \"-1\", cpuLimit: 1, memoryRequest: 1Mi, memoryLimit: 1Mi}"), []string{"spec.packages.tuning.resources.cpuRequest", "must be greater than 0"}},
	{"only some resources", pkg(okPkg + "resources: {cpuRequest: 100m}"), []string{"set all four of cpuRequest, cpuLimit, memoryRequest and memoryLimit, or none"}},
	{"dependsOn a missing package", pkg(okPkg + "dependsOn: {ghost: 1.0.0}"), []string{"spec.packages.tuning.dependsOn.ghost", `Not found: "ghost"`}},
	{"dependsOn another version", skyhook("  packages:\n    tuning: {version: 1.0.0, image: ghcr.io/x/tuning, dependsOn: {base: 9.0.0}}\n    base: {version: 1.0.0, image: ghcr.io/x/base}\n"), []string{"spec.packages.tuning.dependsOn.base", "package base has version 1.0.0"}},
	{"dependsOn without a version", skyhook("  packages:\n    tuning: {version: 1.0.0, image: ghcr.io/x/tuning, dependsOn: {base: \"\"}}\n    base: {version: 1.0.0, image: ghcr.io/x/base}\n"), []string{"spec.packages.tuning.dependsOn.base", "Required value"}},
	{"dependency cycle", skyhook("  packages:\n    tuning: {version: 1.0.0, image: ghcr.io/x/tuning, dependsOn: {base: 1.0.0}}\n    base: {version: 1.0.0, image: ghcr.io/x/base, dependsOn: {tuning: 1.0.0}}\n"), []string{"spec.packages.base.dependsOn", "base -> tuning -> base", "dependsOn forms a cycle"}},
	{"toleration Exists with a value", skyhook("  additionalTolerations: [{key: nvidia.com/gpu, operator: Exists, value: present}]\n"), []string{"spec.additionalTolerations[0].value", "must be empty when operator is Exists"}},
	{"tolerationSeconds without NoExecute", skyhook("  additionalTolerations: [{key: gpu, effect: NoSchedule, tolerationSeconds: 30}]\n"), []string{"spec.additionalTolerations[0].tolerationSeconds", "only allowed with effect NoExecute"}},
	{"name too long", strings.Replace(skyhook("  {}\n"), "name: case", "name: "+strings.Repeat("n", 54), 1), []string{"metadata.name may have at most 53 characters"}},
	{"image without a registry host (the shipped policy audits)", pkg("version: 1.0.0\nimage: ubuntu"), nil},
	{"image from Docker Hub (the shipped policy audits)", pkg("version: 1.0.0\nimage: docker.io/library/ubuntu"), nil},
	{"unknown interrupt type", pkg(okPkg + "interrupt: {type: explode}"), []string{"spec.packages.tuning.interrupt.type", `Unsupported value: "explode"`}},
	{"missing version", pkg("image: ghcr.io/nvidia/tuning"), []string{"spec.packages.tuning.version", "Required value"}},
	{"digest disagrees with containerSHA", pkg("version: 1.0.0\nimage: ghcr.io/x/tuning@sha256:1111111111111111111111111111111111111111111111111111111111111111\ncontainerSHA: sha256:2222222222222222222222222222222222222222222222222222222222222222"), []string{"spec.packages.tuning.containerSHA", "disagrees with the digest"}},
	{"env var with a bad name", pkg(okPkg + "env: [{name: \"1BAD\", value: x}]"), []string{"spec.packages.tuning.env[0].name", "valid environment variable name"}},
	{"every problem at once", skyhook("  packages:\n    tuning: {version: latest, image: ubuntu, dependsOn: {ghost: 1.0.0}}\n    base: {version: 1.0.0, image: \"ghcr.io/x/base:2.0.0\"}\n"), []string{
		"spec.packages.tuning.version", "spec.packages.tuning.dependsOn.ghost",
	}},
	{"registry with a port and no tag", pkg("version: 3.0.0\nimage: registry.local:5000/nvidia/tuning"), nil},
	{"short version and v-tag", pkg("version: \"1.2\"\nimage: ghcr.io/nvidia/tuning:v1.2.0"), nil},
	{"image pinned by digest", pkg("version: 1.0.0\nimage: ghcr.io/x/tuning@sha256:1111111111111111111111111111111111111111111111111111111111111111"), nil},
	{"existing deployment policy", skyhook("  deploymentPolicy: case-policy\n  packages:\n    tuning: {version: 1.0.0, image: ghcr.io/x/tuning}\n"), nil},
	{"localhost registry", pkg("version: 1.0.0\nimage: localhost:5000/tuning"), nil},
}

var policyCases = []admissionCase{
	{"reserved compartment name", policyManifest("  default: {budget: {count: 1}}\n  compartments:\n  - {name: __default__, selector: {matchLabels: {a: b}}, budget: {count: 1}}\n"), []string{"spec.compartments[0].name"}},
	{"compartments with the same selector", policyManifest("  default: {budget: {count: 1}}\n  compartments:\n  - {name: one, selector: {matchLabels: {pool: a}}, budget: {count: 1}}\n  - {name: two, selector: {matchExpressions: [{key: pool, operator: In, values: [a]}]}, budget: {count: 1}}\n"), []string{dpHook, "spec.compartments[1].selector", "Duplicate value", "compartments[0]"}},
	{"compartment selecting everything", policyManifest("  default: {budget: {count: 1}}\n  compartments:\n  - {name: all, selector: {}, budget: {count: 1}}\n"), []string{"spec.compartments[0].selector", "an empty selector selects every node"}},
	{"duplicate compartment names", policyManifest("  default: {budget: {count: 1}}\n  compartments:\n  - {name: a, selector: {matchLabels: {x: \"1\"}}, budget: {count: 1}}\n  - {name: a, selector: {matchLabels: {x: \"2\"}}, budget: {count: 1}}\n"), []string{"spec.compartments[1]", "Duplicate value"}},
	{"budget with percent and count", policyManifest("  default: {budget: {percent: 5, count: 1}}\n"), []string{"spec.default.budget", "set exactly one of percent and count"}},
	{"two strategies", policyManifest("  default: {budget: {count: 1}, strategy: {fixed: {}, exponential: {}}}\n"), []string{"spec.default.strategy", "set exactly one of fixed, linear and exponential"}},
	{"selector with a bad operator", policyManifest("  default: {budget: {count: 1}}\n  compartments:\n  - {name: a, selector: {matchExpressions: [{key: x, operator: Near}]}, budget: {count: 1}}\n"), []string{"spec.compartments[0].selector.matchExpressions[0].operator"}},
	{"minimal policy", policyManifest("  default: {budget: {percent: 25}}\n"), nil},
}

// Every manifest of the table, created with a server-side dry run (what
// `kubectl apply --dry-run=server` does), gets the expected answer.
func TestAdmissionTable(t *testing.T) {
	c := k8sClient(t)
	ensure(t, c, policyManifest("  default: {budget: {count: 1}}\n"), "case-policy")
	cases := append(append([]admissionCase{}, skyhookCases...), policyCases...)
	if len(cases) < 40 {
		t.Fatalf("the table has %d cases; keep at least 40", len(cases))
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := c.Create(context.Background(), decode(t, tc.manifest), client.DryRunAll)
			requireOutcome(t, err, tc.want)
		})
	}
}

// The reference system's manifests pass admission unchanged.
func TestSeedExamplesPassAdmission(t *testing.T) {
	c := k8sClient(t)
	for name, data := range testenv.SeedExamples(t) {
		if err := c.Create(context.Background(), decode(t, string(data)), client.DryRunAll); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
}

func requireOutcome(t *testing.T, err error, want []string) {
	t.Helper()
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("refused: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("accepted; want a refusal with %q", want)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("the refusal lacks %q:\n%v", w, err)
		}
	}
}

func decode(t *testing.T, manifest string) *unstructured.Unstructured {
	t.Helper()
	u := &unstructured.Unstructured{}
	if err := yaml.Unmarshal([]byte(manifest), &u.Object); err != nil {
		t.Fatal(err)
	}
	return u
}

func k8sClient(t *testing.T) client.Client { return testenv.Client(t, env) }

// ensure creates the manifest under the given name unless it exists.
func ensure(t *testing.T, c client.Client, manifest, name string) *unstructured.Unstructured {
	t.Helper()
	obj := decode(t, manifest)
	obj.SetName(name)
	if err := c.Create(context.Background(), obj); err != nil && !strings.Contains(err.Error(), "already exists") {
		t.Fatal(err)
	}
	return obj
}
