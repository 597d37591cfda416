package nodestate

import (
	"encoding/json"
	"maps"
	"strings"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	interruptrec "github.com/skyhook-go/skyhook/reconcile/interrupt"
)

// FuzzNodeRecord puts arbitrary strings in the node annotations and label a
// Skyhook's record is read from (as anyone with write access to nodes may)
// and checks what the operator relies on:
//   - nothing panics; an unreadable nodeState is an error naming the node
//     and the annotation; the config hashes and batch read as something
//     (empty, 0) whatever they hold, and Problems names those that hold
//     something else than this operator writes;
//   - a readable record written back (Patch, applied as the apiserver
//     applies a merge patch) reads back the same, and a second Patch is
//     nil: a record the operator rewrote never makes it write again, so a
//     hostile value costs one write, not a loop.
func FuzzNodeRecord(f *testing.F) {
	const valid = `{"tuning|1.0.0":{"name":"tuning","version":"1.0.0","image":"ghcr.io/x/tuning","stage":"apply","state":"in_progress","restarts":2}}`
	for _, seed := range [][5]string{
		{valid, `{"tuning":"abc"}`, "3", "complete", `{"generation":1,"phase":"drain","since":"2024-01-01T00:00:00Z","packages":["tuning|1.0.0"],"interrupt":{"type":"reboot"}}`},
		{"", "", "", "", ""},
		{"{not-valid-json", "{", "x", "in_progress", "{"},
		{`[1,2,3]`, `[]`, "-1", "", "[]"},
		{`{"a":1}`, `{"tuning":7}`, "99999999999", "erroring", `"string"`},
		{`{"a|1":{"name":5,"restarts":"many"}}`, `{"a":null}`, "+4", "\xff", `null`},
		{`{"\xff|\xfe":{"name":"\xff","stage":"nonexistent-stage","state":"on_fire","restarts":-7}}`, `{"\xff":"\xfe"}`, "07", "blocked", `{"phase":"nowhere","since":"not a time"}`},
		{`{"gone|0.0.0-doesnotexist":{"name":"gone","version":"0.0.0-doesnotexist","stage":"apply","state":"complete"},"unknownKey":{"extra":true}}`, `{}`, " 1", "unknown", `{"generation":-1}`},
		{`null`, `null`, "0", "", ""},
		{`{"x":{}}` + strings.Repeat(" ", 100), `{"x":"` + strings.Repeat("h", 1000) + `"}`, "2147483648", "skipped", ""},
	} {
		f.Add(seed[0], seed[1], seed[2], seed[3], seed[4])
	}
	f.Fuzz(func(t *testing.T, state, config, batch, status, interrupt string) {
		sk := skyhookv1.Skyhooks.Named("demo")
		node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1",
			Labels: map[string]string{sk.StatusKey(): status},
			Annotations: map[string]string{
				sk.NodeStateAnnotation(): state, sk.ConfigAnnotation(): config,
				sk.BatchAnnotation(): batch, sk.StatusKey(): status,
				sk.InterruptAnnotation(): interrupt,
			}}}

		hashes := ReadConfig(node, sk)
		if hashes == nil {
			t.Fatal("ReadConfig returned nil")
		}
		n := ReadBatch(node, sk)
		if n < 0 {
			t.Fatalf("ReadBatch %d", n)
		}
		for _, p := range Problems(node, sk) {
			if !strings.HasPrefix(p, "annotation "+skyhookv1.ConfigPrefix) && !strings.HasPrefix(p, "annotation "+skyhookv1.BatchPrefix) {
				t.Fatalf("a problem naming no annotation: %s", p)
			}
		}
		read, err := Read(node, sk)
		if err != nil {
			if !strings.Contains(err.Error(), "node n1") || !strings.Contains(err.Error(), sk.NodeStateAnnotation()) {
				t.Fatalf("the error names neither the node nor the annotation: %v", err)
			}
			if json.Valid([]byte(state)) && strings.HasPrefix(strings.TrimSpace(state), "{") && !strings.Contains(err.Error(), "cannot unmarshal") {
				t.Logf("a JSON object refused: %v", err)
			}
			return // the operator holds such a node (NodeStateMalformed) and writes nothing
		}
		if read == nil {
			t.Fatal("Read returned a nil record without an error")
		}

		// What the operator writes back: the record as read, its own
		// status for the node (never the label's value) and the
		// interrupt record re-encoded (interrupt.Read, then Encode).
		statuses := []skyhookv1.Status{skyhookv1.StatusComplete, skyhookv1.StatusInProgress, skyhookv1.StatusErroring, skyhookv1.StatusBlocked}
		encoded, err := interruptrec.Encode(interruptrec.Read(node, sk))
		if err != nil {
			t.Fatalf("an interrupt record read does not encode: %v", err)
		}
		rec := Record{State: read, Config: hashes, Status: statuses[len(status)%len(statuses)], Batch: n, Interrupt: encoded, Version: "v1"}
		patch, err := Patch(node, sk, rec)
		if err != nil {
			t.Fatalf("Patch of a record just read: %v", err)
		}
		if patch != nil {
			node = applyMergePatch(t, node, patch)
		}
		again, err := Read(node, sk)
		if err != nil {
			t.Fatalf("the record written back does not read: %v\npatch %s", err, patch)
		}
		if !maps.Equal(again, read) {
			t.Fatalf("read back %v; wrote %v", again, read)
		}
		if problems := Problems(node, sk); len(problems) > 0 {
			t.Fatalf("after the record was written back: %v", problems)
		}
		if second, err := Patch(node, sk, rec); err != nil || second != nil {
			t.Fatalf("a second Patch of the same record: %s, %v; want none (the first was %s)", second, err, patch)
		}
	})
}

// applyMergePatch applies a JSON merge patch to the node, as the apiserver
// does with a client.MergeFrom or RawPatch(MergePatchType).
func applyMergePatch(t *testing.T, node *corev1.Node, patch []byte) *corev1.Node {
	t.Helper()
	doc, err := json.Marshal(node)
	if err != nil {
		t.Fatal(err)
	}
	merged, err := jsonpatch.MergePatch(doc, patch)
	if err != nil {
		t.Fatalf("merge patch %s: %v", patch, err)
	}
	out := &corev1.Node{}
	if err := json.Unmarshal(merged, out); err != nil {
		t.Fatal(err)
	}
	return out
}
