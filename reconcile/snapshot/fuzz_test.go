package snapshot

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FuzzSnapshot reads a snapshot ConfigMap whose package annotation holds
// anything (a snapshot lives in the operator's namespace, but anyone who
// may edit ConfigMaps there can change it) and checks: no panic; an
// unreadable one is an error naming the ConfigMap and the annotation; one
// read writes back and reads back the same package (Write, Read).
func FuzzSnapshot(f *testing.F) {
	for _, seed := range []string{
		`{"name":"tuning","version":"2.0.0","image":"ghcr.io/x/tuning","env":[{"name":"A","value":"b"}],"resources":{"cpuRequest":"100m","cpuLimit":"1","memoryRequest":"64Mi","memoryLimit":"1Gi"}}`,
		``, `null`, `[]`, `{"version":2}`, `{"resources":{"cpuRequest":"lots"}}`, `{"resources":{"cpuRequest":"1e400"}}`,
		`{"interrupt":{"type":"reboot"},"configInterrupts":{"*.conf":{"type":"service","services":["a"]}},"dependsOn":{"x":"1"}}`,
		`{"configMap":{"k":"from the annotation"}}`, `{"env":[{"name":"\xff","valueFrom":{}}]}`, `{"unknown":true}`,
	} {
		f.Add(seed, "k", "v")
	}
	f.Fuzz(func(t *testing.T, annotation, key, value string) {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "demo-tuning-1234", Annotations: map[string]string{keys.Spec: annotation}},
			Data: map[string]string{key: value}}
		pkg, err := keys.Read(cm)
		if err != nil {
			if !strings.Contains(err.Error(), "snapshot demo-tuning-1234") || !strings.Contains(err.Error(), keys.Spec) {
				t.Fatalf("the error names neither the snapshot nor the annotation: %v", err)
			}
			return
		}
		if pkg.ConfigMap[key] != value {
			t.Fatalf("configMap %v; the snapshot's data is %q: %q", pkg.ConfigMap, key, value)
		}
		written := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: cm.Name}}
		if err := Write(written, demo, "tuning", pkg); err != nil {
			t.Fatalf("a package read does not write: %v", err)
		}
		again, err := keys.Read(written)
		if err != nil {
			t.Fatalf("a snapshot written does not read: %v", err)
		}
		if !equality.Semantic.DeepEqual(again, pkg) {
			t.Fatalf("read back %+v; wrote %+v", again, pkg)
		}
		if keys.Of([]corev1.ConfigMap{*written})[Key("tuning", pkg.Version)] == nil && written.Annotations[keys.Spec] != "" {
			t.Fatalf("Of does not index the snapshot written")
		}
	})
}
