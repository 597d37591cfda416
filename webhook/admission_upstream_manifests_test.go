package webhook_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/test/testenv"
)

// refusedUpstream are the manifests NodeWright refuses when they are
// created, with what its end-to-end suite looks for in the refusal (the
// same words here, so scripts that grep for them still work).
var refusedUpstream = map[string][]string{
	"k8s-tests/chainsaw/helm/helm-webhook-test/invalid-skyhook.yaml": {`admission webhook "validate-skyhook.nvidia.com" denied the request`, "spec.packages.cookies.dependsOn.milkshake"},
	// Refused here by the CRD schema (compartments are a list map keyed by
	// name) before the webhook: the message names the duplicate, not the
	// webhook (docs/compatibility.md).
	"k8s-tests/chainsaw/helm/helm-webhook-test/invalid-deploymentpolicy.yaml":      {"spec.compartments[1]", `Duplicate value: {"name":"duplicate-name"}`},
	"k8s-tests/chainsaw/helm/helm-webhook-test/skyhook-missing-policy.yaml":        {`deploymentPolicy "non-existent-policy" not found`},
	"k8s-tests/chainsaw/helm/helm-webhook-test/skyhook-apply-without-enabled.yaml": {"uninstall.apply requires uninstall.enabled"},
}

// manifestDoc is one document of an upstream manifest file.
type manifestDoc struct {
	file string
	obj  *unstructured.Unstructured
}

// upstreamManifests reads every Skyhook and DeploymentPolicy manifest of
// test/reference/nodewright: the files its e2e suite applies, not the
// expected objects its asserts read (file names with "assert", kept there
// for test/upstreame2e), nor other kinds (a LimitRange).
func upstreamManifests(t *testing.T) []manifestDoc {
	t.Helper()
	ref, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(ref, "nodewright")
	var docs []manifestDoc
	err = filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Ext(path) != ".yaml" || strings.Contains(d.Name(), "assert") {
			return err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
		for {
			doc, err := reader.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return err
			}
			obj := &unstructured.Unstructured{}
			if err := yaml.Unmarshal(doc, &obj.Object); err != nil {
				return err
			}
			if kind := obj.GetKind(); kind == "Skyhook" || kind == "DeploymentPolicy" {
				docs = append(docs, manifestDoc{file: filepath.ToSlash(rel), obj: obj})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// Every Skyhook and DeploymentPolicy manifest of NodeWright gets NodeWright's
// verdict here, unchanged: its DeploymentPolicies are created first (the
// Skyhooks name them), then each Skyhook is created with a server-side dry
// run, as `kubectl apply --dry-run=server` does.
func TestUpstreamManifestsGetUpstreamsVerdict(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	docs := upstreamManifests(t)
	if len(docs) != 90 {
		t.Fatalf("%d documents under test/reference/nodewright, want the 90 kept there", len(docs))
	}
	var accepted, refused int
	judge := func(d manifestDoc, opts ...client.CreateOption) {
		t.Run(d.file+"/"+d.obj.GetName(), func(t *testing.T) {
			err := c.Create(ctx, d.obj.DeepCopy(), opts...)
			want, refuse := refusedUpstream[d.file]
			if refuse {
				refused++
				requireOutcome(t, err, want)
				return
			}
			if err != nil && !strings.Contains(err.Error(), "already exists") {
				t.Fatalf("NodeWright accepts it; refused here: %v", err)
			}
			accepted++
		})
	}
	for _, d := range docs {
		if d.obj.GetKind() == "DeploymentPolicy" {
			judge(d)
			t.Cleanup(func() { _ = c.Delete(context.Background(), d.obj) })
		}
	}
	for _, d := range docs {
		if d.obj.GetKind() == "Skyhook" {
			judge(d, client.DryRunAll)
		}
	}
	if accepted != 86 || refused != 4 {
		t.Errorf("%d accepted and %d refused, want NodeWright's 86 and 4", accepted, refused)
	}
}

// The two updates NodeWright's helm-webhook-test expects refused: removing,
// and lowering the version of, a package that declares uninstall support
// before it was uninstalled.
func TestUpstreamUninstallGatesRefuseItsUpdates(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	byFile := map[string]*unstructured.Unstructured{}
	for _, d := range upstreamManifests(t) {
		byFile[d.file] = d.obj
	}
	const dir = "k8s-tests/chainsaw/helm/helm-webhook-test/"
	valid := byFile[dir+"skyhook-uninstall-valid.yaml"].DeepCopy()
	if err := c.Create(ctx, valid); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), valid) })
	for file, want := range map[string]string{
		"update-remove-enabled-pkg.yaml":    "uninstall.enabled=true",
		"update-downgrade-enabled-pkg.yaml": "set uninstall.apply=true first",
	} {
		t.Run(file, func(t *testing.T) {
			err := retry.RetryOnConflict(retry.DefaultRetry, func() error { // the operator adds its finalizer meanwhile
				var current unstructured.Unstructured
				current.SetGroupVersionKind(valid.GroupVersionKind())
				if err := c.Get(ctx, client.ObjectKeyFromObject(valid), &current); err != nil {
					return err
				}
				update := byFile[dir+file].DeepCopy()
				update.SetResourceVersion(current.GetResourceVersion())
				return c.Update(ctx, update, client.DryRunAll)
			})
			requireOutcome(t, err, []string{want})
		})
	}
}
