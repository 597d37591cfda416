// Package chainsaw evaluates NodeWright's end-to-end expectations (chainsaw
// assert and error files, and its metrics_test.py checks) against a live
// cluster, with the semantics chainsaw gives them: an expected document is a
// kyverno-json assertion tree (a partial match of the object: keys present
// must match, `(expression): value` keys project with JMESPath, `~` iterates),
// resolved by apiVersion, kind and name, or, without a name, by namespace and
// labels, one matching candidate sufficing.
//
// One difference in timing: chainsaw stops an assert at the first evaluation
// error (a JMESPath function given null, say `length()` of an annotation not
// written yet); here an error counts as "not yet" until the timeout, and is
// reported then.
package chainsaw

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/jmespath-community/go-jmespath/pkg/binding"
	"github.com/kyverno/kyverno-json/pkg/engine/assert"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/util/wait"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/yaml"
)

// Document is one YAML document of an assert or error file.
type Document struct {
	// File names the file, as the caller read it (a path under upstream's
	// k8s-tests/chainsaw, for the skip list and the logs).
	File string
	// Index counts the file's non-empty documents from 0.
	Index int
	// Expected is the document, numbers as JSON has them (float64).
	Expected map[string]any
}

// ID names the document: file, index, kind and name (or labels).
func (d Document) ID() string {
	return fmt.Sprintf("%s#%d %s", d.File, d.Index, d.Describe())
}

// Describe is the document's kind and name, or its labels without a name.
func (d Document) Describe() string {
	u := d.object()
	if u.GetName() != "" {
		return u.GetKind() + "/" + u.GetName()
	}
	var labels []string
	for k, v := range u.GetLabels() {
		labels = append(labels, k+"="+v)
	}
	sort.Strings(labels)
	return u.GetKind() + "[" + strings.Join(labels, ",") + "]"
}

func (d Document) object() *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: d.Expected}
}

// ReadFile reads the documents of a file; name is how they are named.
func ReadFile(path, name string) ([]Document, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(name, data)
}

// Parse splits a YAML stream into documents, leaving out empty ones.
func Parse(name string, data []byte) ([]Document, error) {
	var docs []Document
	r := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		var obj map[string]any
		if err := yaml.Unmarshal(raw, &obj); err != nil {
			return nil, fmt.Errorf("%s: document %d: %w", name, len(docs), err)
		}
		if len(obj) == 0 {
			continue
		}
		docs = append(docs, Document{File: name, Index: len(docs), Expected: obj})
	}
}

// Check evaluates an expected document against an object: no errors is a
// match. The error reports an expression that could not be evaluated.
func Check(ctx context.Context, expected, actual map[string]any) (field.ErrorList, error) {
	normal, err := jsonValue(actual)
	if err != nil {
		return nil, err
	}
	return assert.Assert(ctx, nil, assert.Parse(ctx, expected), normal, binding.NewBindings())
}

// jsonValue is v as encoding/json decodes it (numbers float64), as the
// JMESPath functions expect.
func jsonValue(v map[string]any) (any, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var out any
	err = json.Unmarshal(data, &out)
	return out, err
}

// Runner resolves documents against a cluster and polls them.
type Runner struct {
	Client client.Client
	// Namespace is used for a namespaced document without one (chainsaw's
	// test namespace).
	Namespace string
	// Timeout bounds each assert and error; Interval is the poll period.
	Timeout, Interval time.Duration
	// Quiet, when set, ends a failing poll before the timeout once its
	// candidates have stayed the same objects with the same content (a
	// node's heartbeats aside, see versions) for that long: nothing is
	// changing that could make the outcome change. (Chainsaw waits for the
	// timeout; the outcome differs only for an object that changes after a
	// quiet spell that long.) A labelled document without candidates is
	// quiet once no object of its kind in its namespace changed for that
	// long; a named object that does not exist waits for the timeout.
	Quiet time.Duration
}

// Failure is an expectation that did not hold by the timeout.
type Failure struct {
	Doc Document
	// Problems are the last evaluation's, one per candidate (or why there
	// was none).
	Problems []string
	// Live are the candidates last seen, as YAML without managedFields.
	Live []string
	// Timeout is how long it was polled; Quiet, when the poll ended
	// early, how long the candidates had not changed.
	Timeout, Quiet time.Duration
}

func (f *Failure) Error() string {
	var b strings.Builder
	if f.Quiet > 0 {
		fmt.Fprintf(&b, "%s did not hold (its objects unchanged for %s):\n", f.Doc.ID(), f.Quiet.Round(time.Second))
	} else {
		fmt.Fprintf(&b, "%s did not hold within %s:\n", f.Doc.ID(), f.Timeout)
	}
	for _, p := range f.Problems {
		fmt.Fprintf(&b, "  %s\n", strings.ReplaceAll(p, "\n", "\n  "))
	}
	for _, l := range f.Live {
		fmt.Fprintf(&b, "live object:\n%s", l)
	}
	return b.String()
}

// Assert polls until an object matching the document exists.
func (r *Runner) Assert(ctx context.Context, doc Document) error {
	return r.poll(ctx, doc, true)
}

// Error polls until no object matches the document (chainsaw's error
// operation; an absent object passes).
func (r *Runner) Error(ctx context.Context, doc Document) error {
	return r.poll(ctx, doc, false)
}

func (r *Runner) poll(ctx context.Context, doc Document, want bool) error {
	timeout, interval := r.Timeout, r.Interval
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	if interval == 0 {
		interval = 200 * time.Millisecond
	}
	last := &Failure{Doc: doc}
	var quiet struct {
		versions string
		since    time.Time
	}
	errQuiet := errors.New("quiet")
	err := wait.PollUntilContextTimeout(ctx, interval, timeout, true, func(ctx context.Context) (bool, error) {
		candidates, err := r.read(ctx, doc)
		if err != nil {
			last.Problems, last.Live = []string{err.Error()}, nil
			return false, nil
		}
		if r.Quiet > 0 {
			watched := candidates
			if len(candidates) == 0 && doc.object().GetName() == "" {
				// No object has the labels yet: one could only by
				// changing, so the kind's objects are watched.
				if watched, err = r.list(ctx, doc, false); err != nil {
					last.Problems, last.Live = []string{err.Error()}, nil
					return false, nil
				}
			}
			if v := versions(watched); v == "" || v != quiet.versions {
				quiet.versions, quiet.since = v, time.Now()
			} else if time.Since(quiet.since) >= r.Quiet {
				last.Quiet = time.Since(quiet.since)
				return false, errQuiet
			}
		}
		last.Problems, last.Live = nil, nil
		if len(candidates) == 0 {
			last.Problems = []string{"no actual resource found"}
			return !want, nil
		}
		matched := 0
		for _, c := range candidates {
			errs, err := Check(ctx, doc.Expected, c.Object)
			switch {
			case err != nil:
				last.Problems = append(last.Problems, fmt.Sprintf("%s: evaluation error: %v", name(c), err))
			case len(errs) > 0:
				last.Problems = append(last.Problems, fmt.Sprintf("%s:\n%s", name(c), errs.ToAggregate().Error()))
			default:
				matched++
				if !want {
					last.Problems = append(last.Problems, fmt.Sprintf("%s: resource matches expectation", name(c)))
				}
			}
			if want && matched > 0 {
				return true, nil
			}
			last.Live = append(last.Live, liveYAML(c))
		}
		return !want && matched == 0, nil
	})
	if err == nil {
		return nil
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !errors.Is(err, errQuiet) {
		last.Timeout = timeout
	}
	return last
}

// versions identifies the candidates' state: their names and contents
// ("" for none), less what changes without changing what an expectation
// reads: the resourceVersion, managedFields, and a node's heartbeats (the
// lastHeartbeatTime of its conditions, which a kubelet, here KWOK,
// refreshes every few tens of seconds).
func versions(candidates []unstructured.Unstructured) string {
	var parts []string
	for _, c := range candidates {
		c := c.DeepCopy()
		c.SetResourceVersion("")
		c.SetManagedFields(nil)
		if conds, ok, _ := unstructured.NestedSlice(c.Object, "status", "conditions"); ok {
			for _, cond := range conds {
				if m, ok := cond.(map[string]any); ok {
					delete(m, "lastHeartbeatTime")
				}
			}
			_ = unstructured.SetNestedSlice(c.Object, conds, "status", "conditions")
		}
		content, _ := json.Marshal(c.Object) // decoded JSON always encodes
		sum := sha256.Sum256(content)
		parts = append(parts, c.GetNamespace()+"/"+c.GetName()+"@"+hex.EncodeToString(sum[:8]))
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// read returns the document's candidates: the named object, or those of
// its kind in its namespace with its labels. A missing named object is no
// candidate.
func (r *Runner) read(ctx context.Context, doc Document) ([]unstructured.Unstructured, error) {
	want := doc.object()
	gvk := want.GroupVersionKind()
	if gvk.Kind == "" || gvk.Version == "" {
		return nil, fmt.Errorf("the document has no apiVersion or kind")
	}
	namespace, err := r.namespace(want)
	if err != nil {
		return nil, err
	}
	if want.GetName() != "" {
		var got unstructured.Unstructured
		got.SetGroupVersionKind(gvk)
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: namespace, Name: want.GetName()}, &got)
		if apierrors.IsNotFound(err) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return []unstructured.Unstructured{got}, nil
	}
	return r.list(ctx, doc, true)
}

// list returns the objects of the document's kind in its namespace, with
// its labels when byLabels.
func (r *Runner) list(ctx context.Context, doc Document, byLabels bool) ([]unstructured.Unstructured, error) {
	want := doc.object()
	gvk := want.GroupVersionKind()
	namespace, err := r.namespace(want)
	if err != nil {
		return nil, err
	}
	var list unstructured.UnstructuredList
	list.SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	var opts []client.ListOption
	if namespace != "" {
		opts = append(opts, client.InNamespace(namespace))
	}
	if labels := want.GetLabels(); byLabels && len(labels) > 0 {
		opts = append(opts, client.MatchingLabels(labels))
	}
	if err := r.Client.List(ctx, &list, opts...); err != nil {
		return nil, err
	}
	return list.Items, nil
}

// namespace is where the document's object is: its own namespace, the
// runner's for a namespaced kind written without one, none for a
// cluster-scoped kind.
func (r *Runner) namespace(want *unstructured.Unstructured) (string, error) {
	if ns := want.GetNamespace(); ns != "" {
		return ns, nil
	}
	probe := &unstructured.Unstructured{}
	probe.SetGroupVersionKind(want.GroupVersionKind())
	namespaced, err := r.Client.IsObjectNamespaced(probe)
	if err != nil || !namespaced {
		return "", err
	}
	return r.Namespace, nil
}

func name(u unstructured.Unstructured) string {
	if u.GetNamespace() != "" {
		return fmt.Sprintf("%s %s/%s", u.GetKind(), u.GetNamespace(), u.GetName())
	}
	return fmt.Sprintf("%s %s", u.GetKind(), u.GetName())
}

func liveYAML(u unstructured.Unstructured) string {
	c := u.DeepCopy()
	unstructured.RemoveNestedField(c.Object, "metadata", "managedFields")
	out, err := yaml.Marshal(c.Object)
	if err != nil {
		return err.Error() + "\n"
	}
	return string(out)
}
