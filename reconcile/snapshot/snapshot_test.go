package snapshot

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// demo is the Skyhook whose snapshots the tests write; keys are its kind's.
var (
	demo = skyhookv1.Skyhooks.Named("demo")
	keys = KeysOf(skyhookv1.Skyhooks)
)

func TestWriteThenReadGivesThePackageBack(t *testing.T) {
	pkg := skyhookv1.Package{
		PackageRef:         skyhookv1.PackageRef{Name: "tuning", Version: "2.0.0+build.1"},
		Image:              "ghcr.io/x/tuning",
		AgentImageOverride: "ghcr.io/x/agent:2",
		ConfigMap:          map[string]string{"mode.conf": "two"},
		Env:                []corev1.EnvVar{{Name: "MODE", Value: "two"}, {Name: "TOKEN", ValueFrom: &corev1.EnvVarSource{SecretKeyRef: &corev1.SecretKeySelector{Key: "t"}}}},
		Resources:          &skyhookv1.ResourceRequirements{CPURequest: ptr.To(resource.MustParse("100m")), CPULimit: ptr.To(resource.MustParse("1")), MemoryRequest: ptr.To(resource.MustParse("64Mi")), MemoryLimit: ptr.To(resource.MustParse("1Gi"))},
	}
	name := Name(demo, "tuning", pkg.Version)
	if strings.ContainsAny(name, "+_") || !strings.HasPrefix(name, "demo-tuning-") {
		t.Errorf("name %q is not a valid readable ConfigMap name", name)
	}
	if Name(demo, "tuning", "2.0.0") == name {
		t.Error("two versions share a snapshot name")
	}
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}}
	if err := Write(cm, demo, "tuning", pkg); err != nil {
		t.Fatal(err)
	}
	if cm.Data["mode.conf"] != "two" || strings.Contains(cm.Annotations[keys.Spec], "mode.conf") {
		t.Errorf("the configMap belongs in data only: data %v, annotation %s", cm.Data, cm.Annotations[keys.Spec])
	}
	got, err := keys.Read(cm)
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, pkg) {
		t.Errorf("read back\n %+v\nwant\n %+v", got, pkg)
	}
	index := keys.Of([]corev1.ConfigMap{*cm, {ObjectMeta: metav1.ObjectMeta{Name: "unrelated"}}})
	if len(index) != 1 || index[Key("tuning", pkg.Version)] == nil {
		t.Errorf("index %v", index)
	}
}

func TestReadRejectsABrokenSnapshot(t *testing.T) {
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "x", Annotations: map[string]string{keys.Spec: "{"}}}
	if _, err := keys.Read(cm); err == nil || !strings.Contains(err.Error(), keys.Spec) {
		t.Errorf("error %v, want one naming the annotation", err)
	}
}

// A NodeWright's snapshots are apart from a Skyhook's of the same name:
// another name, and keys under nodewright.nvidia.com/.
func TestNodeWrightSnapshotsAreApart(t *testing.T) {
	nw := skyhookv1.NodeWrights.Named("demo")
	if Name(nw, "tuning", "1.0.0") == Name(demo, "tuning", "1.0.0") {
		t.Fatal("a NodeWright's snapshot has the name of a Skyhook's")
	}
	cm := &corev1.ConfigMap{}
	if err := Write(cm, nw, "tuning", skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: "1.0.0"}, Image: "ghcr.io/x/tuning"}); err != nil {
		t.Fatal(err)
	}
	nwKeys := KeysOf(skyhookv1.NodeWrights)
	if cm.Labels["nodewright.nvidia.com/nodewright"] != "demo" || cm.Labels["nodewright.nvidia.com/package"] != "tuning" || nwKeys.Of([]corev1.ConfigMap{*cm})[Key("tuning", "1.0.0")] == nil {
		t.Fatalf("labels %v annotations %v", cm.Labels, cm.Annotations)
	}
	if keys.Of([]corev1.ConfigMap{*cm})[Key("tuning", "1.0.0")] != nil {
		t.Fatal("a Skyhook's keys read a NodeWright's snapshot")
	}
}
