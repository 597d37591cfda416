package interrupt

import (
	"reflect"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// FuzzRecord reads an arbitrary interrupt annotation as the operator does
// and checks: no panic; an unreadable one is no record (the interrupt path
// starts over), and so is one of a phase the operator does not know; a
// record read encodes, and reads back the same (what the
// operator writes back is stable: one write, not a loop); Merge of its
// interrupt with itself is its interrupt, services sorted and unique.
// demo is the rollout whose record the target reads.
var demo = skyhookv1.NodeWrights.Named("demo")

func FuzzRecord(f *testing.F) {
	for _, seed := range []string{
		`{"generation":3,"phase":"verify","since":"2024-05-01T10:00:00Z","packages":["a|1","b|2"],"interrupt":{"type":"service","services":["kubelet","containerd"]},"bootID":"abc"}`,
		`{"phase":"drained","interrupt":{"type":"reboot"}}`,
		`null`, `{}`, `[]`, `"drain"`, `{"generation":"3"}`, `{"since":"yesterday"}`,
		`{"phase":"drain","since":"2024-05-01T10:00:00+23:59"}`, `{"phase":"skipped","since":"0000-01-01T00:00:00Z"}`,
		`{"phase":"drain","packages":[1,2]}`, `{"phase":"interrupt","packages":null,"interrupt":null}`,
		`{"phase":"interrupt","interrupt":{"type":"service","services":["b","a","b",""]}}`, `{"phase":"verify","interrupt":{"type":"explode"}}`,
		`{"phase":"nowhere","unknown":{"deep":[1,{"x":null}]}}`, `{"generation":1e400}`, `{"bootID":"\ud800"}`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n", Annotations: map[string]string{demo.InterruptAnnotation(): raw}}}
		rec := Read(node, demo)
		if rec == nil {
			return
		}
		if !rec.Phase.Known() {
			t.Fatalf("a record of phase %q was read", rec.Phase)
		}
		encoded, err := Encode(rec)
		if err != nil {
			t.Fatalf("a record read from %q does not encode: %v", raw, err)
		}
		node.Annotations[demo.InterruptAnnotation()] = encoded
		again := Read(node, demo)
		if again == nil {
			t.Fatalf("the encoded record %q does not read back", encoded)
		}
		if !again.Since.Equal(rec.Since) {
			t.Fatalf("since %v read back as %v", rec.Since, again.Since)
		}
		again.Since = rec.Since
		if !reflect.DeepEqual(again, rec) {
			t.Fatalf("read back %+v; wrote %+v", again, rec)
		}
		if reencoded, _ := Encode(again); reencoded != encoded {
			t.Fatalf("encoded twice differently:\n%s\n%s", encoded, reencoded)
		}
		merged := Merge([]skyhookv1.Interrupt{rec.Interrupt, rec.Interrupt})
		if merged == nil {
			t.Fatal("Merge of two interrupts is nil")
		}
		for i := 1; i < len(merged.Services); i++ {
			if merged.Services[i-1] >= merged.Services[i] {
				t.Fatalf("merged services %q are not sorted and unique", merged.Services)
			}
		}
	})
}
