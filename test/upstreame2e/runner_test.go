package upstreame2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/skyhook-go/skyhook/test/testenv"
	"github.com/skyhook-go/skyhook/test/upstreame2e/chainsaw"
)

// The assertion runner against live objects: a named document and a
// labelled one pass; a mismatch is reported with the live object, early
// once the object stays unchanged (Quiet); a missing object waits for the
// timeout, a labelled document nothing matches only until the kind's
// objects stay unchanged; the error operation passes when nothing matches.
func TestRunnerOnLiveObjects(t *testing.T) {
	ctx := context.Background()
	c := testenv.Client(t, env)
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "runner-probe", Namespace: namespace, Labels: map[string]string{"probe": "runner"}},
		Data:       map[string]string{"a": "1"},
	}
	if err := c.Create(ctx, cm); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), cm) })
	doc := func(text string) chainsaw.Document {
		t.Helper()
		docs, err := chainsaw.Parse("probe.yaml", []byte(text))
		if err != nil || len(docs) != 1 {
			t.Fatalf("%d documents, %v", len(docs), err)
		}
		return docs[0]
	}
	named := func(value string) chainsaw.Document {
		return doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: runner-probe, namespace: skyhook}\ndata: {a: \"" + value + "\"}\n")
	}
	r := &chainsaw.Runner{Client: c, Namespace: namespace, Timeout: 30 * time.Second, Quiet: time.Second}

	if err := r.Assert(ctx, named("1")); err != nil {
		t.Errorf("matching named document: %v", err)
	}
	if err := r.Assert(ctx, doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {probe: runner}}\ndata: {a: \"1\"}\n")); err != nil {
		t.Errorf("matching labelled document (namespace from the runner): %v", err)
	}

	start := time.Now()
	err := r.Assert(ctx, named("2"))
	var failure *chainsaw.Failure
	if !errors.As(err, &failure) || failure.Quiet == 0 || time.Since(start) > 10*time.Second {
		t.Fatalf("mismatch: %v after %s; want a failure reported once the object stayed unchanged", err, time.Since(start))
	}
	if msg := err.Error(); !strings.Contains(msg, `data.a: Invalid value: "1"`) || !strings.Contains(msg, "name: runner-probe") {
		t.Errorf("the failure does not show the difference and the live object:\n%s", msg)
	}

	short := &chainsaw.Runner{Client: c, Namespace: namespace, Timeout: 2 * time.Second, Quiet: time.Second}
	start = time.Now()
	err = short.Assert(ctx, doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: runner-absent, namespace: skyhook}\n"))
	if !errors.As(err, &failure) || failure.Timeout == 0 || time.Since(start) < 2*time.Second {
		t.Errorf("missing object: %v after %s; want the whole timeout", err, time.Since(start))
	}

	start = time.Now()
	err = r.Assert(ctx, doc("apiVersion: v1\nkind: ConfigMap\nmetadata: {labels: {probe: absent}}\n"))
	if !errors.As(err, &failure) || failure.Quiet == 0 || time.Since(start) > 10*time.Second {
		t.Errorf("labelled document nothing matches: %v after %s; want a failure once the kind's objects stayed unchanged", err, time.Since(start))
	}

	if err := short.Error(ctx, named("2")); err != nil {
		t.Errorf("error operation on a document nothing matches: %v", err)
	}
	if err := short.Error(ctx, named("1")); err == nil || !strings.Contains(err.Error(), "resource matches expectation") {
		t.Errorf("error operation on a matching document: %v, want a failure", err)
	}
}
