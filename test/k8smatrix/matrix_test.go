package k8smatrix

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apiextensionsclient "k8s.io/apiextensions-apiserver/pkg/client/clientset/clientset"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
)

// The apiserver is the release asked for, as discovery reports it (what
// kubectl version and the operator's clients read).
func TestServerVersionIsTheRequestedOne(t *testing.T) {
	info, err := env.Clientset.Discovery().ServerVersion()
	if err != nil {
		t.Fatal(err)
	}
	if info.GitVersion != versions.Kubernetes {
		t.Fatalf("server version %s, want %s", info.GitVersion, versions.Kubernetes)
	}
	t.Logf("apiserver %s (%s)", info.GitVersion, info.GoVersion)
}

// Every CRD of the operator is accepted, established and served: its kinds
// are in discovery, and the release's own kubectl lists them.
func TestCRDsAreEstablishedAndServed(t *testing.T) {
	crds, err := config.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	ext, err := apiextensionsclient.NewForConfig(env.Config)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, want := range crds {
		got, err := ext.ApiextensionsV1().CustomResourceDefinitions().Get(ctx, want.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, cond := range []apiextensionsv1.CustomResourceDefinitionConditionType{apiextensionsv1.Established, apiextensionsv1.NamesAccepted} {
			if !crdCondition(got, cond) {
				t.Errorf("%s: condition %s not true: %+v", want.Name, cond, got.Status.Conditions)
			}
		}
		for _, v := range want.Spec.Versions {
			if !v.Served {
				continue
			}
			gv := want.Spec.Group + "/" + v.Name
			resources, err := env.Clientset.Discovery().ServerResourcesForGroupVersion(gv)
			if err != nil {
				t.Fatalf("%s: discovery of %s: %v", want.Name, gv, err)
			}
			if !slices.ContainsFunc(resources.APIResources, func(r metav1.APIResource) bool { return r.Name == want.Spec.Names.Plural }) {
				t.Errorf("%s: %s not in the discovery of %s", want.Name, want.Spec.Names.Plural, gv)
			}
		}
		if _, err := env.Kubectl("get", want.Spec.Names.Plural, "--all-namespaces"); err != nil {
			t.Error(err)
		}
	}
}

func crdCondition(crd *apiextensionsv1.CustomResourceDefinition, typ apiextensionsv1.CustomResourceDefinitionConditionType) bool {
	for _, c := range crd.Status.Conditions {
		if c.Type == typ {
			return c.Status == apiextensionsv1.ConditionTrue
		}
	}
	return false
}

// A valid Skyhook is admitted and comes back with the mutating webhook's
// defaults (the package's name from its key, the image's tag moved out) and
// the schema's (the priority).
func TestValidSkyhookIsAdmittedWithDefaults(t *testing.T) {
	sk := &skyhookv1.Skyhook{}
	mustUnmarshal(t, manifest("Skyhook", "defaults", `
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning:1.0.0
`), sk)
	if err := k8sClient(t).Create(context.Background(), sk, client.DryRunAll); err != nil {
		t.Fatal(err)
	}
	p := sk.Spec.Packages["tuning"]
	if p.Name != "tuning" {
		t.Errorf("spec.packages.tuning.name = %q, want the key, set by the mutating webhook", p.Name)
	}
	if p.Image != "ghcr.io/x/tuning" {
		t.Errorf("spec.packages.tuning.image = %q, want the tag moved out by the mutating webhook", p.Image)
	}
	if sk.Spec.Priority != skyhookv1.DefaultPriority {
		t.Errorf("spec.priority = %d, want the schema's default %d", sk.Spec.Priority, skyhookv1.DefaultPriority)
	}
}

// What the validating webhook, the OpenAPI schema, the CEL rules of every
// CRD and strict field validation refuse, each with the field named: the
// rules run on the apiserver, so each release judges them itself.
func TestInvalidObjectsAreRefusedWithTheField(t *testing.T) {
	const okPkg = "      version: 1.0.0\n      image: ghcr.io/x/tuning\n"
	cases := []struct {
		name, kind, spec string
		// objectName is the object's name; "case" when empty.
		objectName string
		want       []string
	}{
		{name: "webhook: version not semver", kind: "Skyhook",
			spec: "  packages:\n    tuning:\n      version: latest\n      image: ghcr.io/x/tuning\n",
			want: []string{`admission webhook "validate-skyhook.nvidia.com" denied the request`, "spec.packages.tuning.version", "must be a semantic version"}},
		{name: "strict field validation: unknown field", kind: "Skyhook",
			spec: "  bogus: true\n",
			want: []string{`unknown field "spec.bogus"`}},
		{name: "schema: priority below the minimum", kind: "Skyhook",
			spec: "  priority: 0\n",
			want: []string{"spec.priority", "greater than or equal to 1"}},
		{name: "schema: unsupported enum value", kind: "Skyhook",
			spec: "  sequencing: sometimes\n",
			want: []string{"spec.sequencing", `Unsupported value: "sometimes"`}},
		{name: "CEL has(): budget percent and count", kind: "Skyhook",
			spec: "  interruptionBudget: {percent: 10, count: 1}\n",
			want: []string{"spec.interruptionBudget", "percent and count are mutually exclusive"}},
		{name: "CEL duration(): drain timeout not positive", kind: "Skyhook",
			spec: "  drain: {timeout: 0s}\n",
			want: []string{"spec.drain.timeout", "timeout must be positive"}},
		{name: "CEL matches() on map keys: package name", kind: "Skyhook",
			spec: "  packages:\n    Tuning_1:\n" + okPkg,
			want: []string{"spec.packages", "package names must match"}},
		{name: "CEL on a map value: uninstall.apply without enabled", kind: "Skyhook",
			spec: "  packages:\n    tuning:\n" + okPkg + "      uninstall: {apply: true}\n",
			want: []string{"spec.packages[tuning].uninstall", "uninstall.apply requires uninstall.enabled"}},
		{name: "CEL on metadata: name too long", kind: "Skyhook", objectName: strings.Repeat("n", 54),
			spec: "  {}\n",
			want: []string{"metadata.name may have at most 53 characters"}},
		{name: "CEL exists_one(): two strategies", kind: "DeploymentPolicy",
			spec: "  default:\n    budget: {count: 1}\n    strategy: {fixed: {}, linear: {}}\n",
			want: []string{"spec.default.strategy", "set exactly one of fixed, linear and exponential"}},
		{name: "CEL contains(): path escaping the artifact", kind: "PackageSet",
			spec: "  sourceRef: {kind: OCIRepository, name: fleet}\n  interval: 5m\n  path: ../../etc\n",
			want: []string{"spec.path", "path must not contain '..'"}},
	}
	c := k8sClient(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			name := tc.objectName
			if name == "" {
				name = "case"
			}
			obj := &unstructured.Unstructured{}
			mustUnmarshal(t, manifest(tc.kind, name, tc.spec), &obj.Object)
			if tc.kind == "PackageSet" {
				obj.SetNamespace(metav1.NamespaceDefault)
			}
			err := c.Create(context.Background(), obj, client.DryRunAll, client.FieldValidation(metav1.FieldValidationStrict))
			if err == nil {
				t.Fatal("admitted")
			}
			t.Log(err) // with -v, for comparing releases
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("the refusal does not say %q:\n%v", w, err)
				}
			}
		})
	}
}

// A rollout of two packages, one asking for a reboot, over three nodes
// completes: every node complete and uncordoned, and rebooted once (a new
// boot ID).
func TestRolloutWithRebootCompletes(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	nodes := simnode.Numbered(pool, 3, nil)
	bootIDs := map[string]string{}
	for _, n := range nodes {
		bootIDs[n.Name] = getNode(t, n.Name).Status.NodeInfo.BootID
	}
	sk := &skyhookv1.Skyhook{}
	mustUnmarshal(t, manifest("Skyhook", "matrix", `
  nodeSelectors: {matchLabels: {pool: `+pool+`}}
  interruptionBudget: {count: 2}
  packages:
    tuning:
      version: 1.0.0
      image: ghcr.io/x/tuning
      env: [{name: `+simnode.DurationEnv+`, value: 100ms}]
    driver:
      version: 2.1.0
      image: ghcr.io/x/driver
      dependsOn: {tuning: 1.0.0}
      interrupt: {type: reboot}
      env: [{name: `+simnode.DurationEnv+`, value: 100ms}]
`), sk)
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })

	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
			return false, nil
		}
		return conditions.IsTrue(sk, meta.ReadyCondition) && sk.Status.ObservedGeneration == sk.Generation, nil
	})
	if err != nil {
		t.Fatalf("the Skyhook is not Ready: %v; status: %+v", err, sk.Status)
	}
	reboots := hosts.Reboots()
	for _, n := range nodes {
		node := getNode(t, n.Name)
		if status := node.Labels[skyhookv1.StatusKey(sk.Name)]; status != string(skyhookv1.StatusComplete) {
			t.Errorf("%s: status %q, want complete", n.Name, status)
		}
		if reboots[n.Name] != 1 {
			t.Errorf("%s: rebooted %d times, want once", n.Name, reboots[n.Name])
		}
		if node.Status.NodeInfo.BootID == bootIDs[n.Name] {
			t.Errorf("%s: boot ID %s unchanged", n.Name, bootIDs[n.Name])
		}
		if node.Spec.Unschedulable || node.Annotations[cordon.Annotation] != "" {
			t.Errorf("%s left cordoned (%q)", n.Name, node.Annotations[cordon.Annotation])
		}
		if !nodeReady(node) {
			t.Errorf("%s not Ready", n.Name)
		}
	}
	// The release's kubectl reads the printer columns.
	out, err := env.Kubectl("get", "skyhook", sk.Name)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, sk.Name) {
		t.Errorf("kubectl get skyhook:\n%s", out)
	}
}

func getNode(t *testing.T, name string) *corev1.Node {
	t.Helper()
	n, err := env.Clientset.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func nodeReady(n *corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// manifest is an object of a Skyhook kind with the given name and spec
// (YAML indented by two spaces).
func manifest(kind, name, spec string) string {
	return "apiVersion: " + skyhookv1.GroupVersion.String() + "\nkind: " + kind + "\nmetadata:\n  name: " + name + "\nspec:\n" + spec
}

func mustUnmarshal(t *testing.T, doc string, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict([]byte(doc), into); err != nil {
		t.Fatal(err)
	}
}
