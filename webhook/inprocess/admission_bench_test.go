// Package inprocess benchmarks the admission handlers without a cluster, so
// the numbers are the operator's own cost, free of the noise of a control
// plane running beside them.
package inprocess

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	skyhookwebhook "github.com/skyhook-go/skyhook/webhook"
	"github.com/skyhook-go/skyhook/webhook/policy"
	"github.com/skyhook-go/skyhook/webhook/webhooktest"
)

// BenchmarkAdmissionInProcess is the operator's own cost per Skyhook: the
// mutating and the validating handler, default policies included, called
// directly with an AdmissionRequest for a ten-package Skyhook.
func BenchmarkAdmissionInProcess(b *testing.B) {
	mutate, validate, req := setup(b)
	runAdmission(b, req, &atomic.Int64{}, func() (*admission.Webhook, *admission.Webhook) { return mutate, validate })
}

// setup returns the Skyhook handlers with the default policies and a create
// request for a ten-package Skyhook.
func setup(tb testing.TB) (mutate, validate *admission.Webhook, req admission.Request) {
	defaults, err := policy.Defaults()
	if err != nil {
		tb.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = skyhookv1.AddToScheme(scheme)
	handlers := skyhookwebhook.Handlers(scheme, skyhookwebhook.Options{Policies: policy.NewStore(defaults)})
	raw, err := json.Marshal(webhooktest.TenPackages("bench"))
	if err != nil {
		tb.Fatal(err)
	}
	req = admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "bench", Operation: admissionv1.Create, Name: "bench",
		Kind:   metav1.GroupVersionKind{Group: "skyhook.nvidia.com", Version: "v1alpha1", Kind: "Skyhook"},
		Object: runtime.RawExtension{Raw: raw},
	}}
	return handlers[skyhookwebhook.MutateSkyhookPath], handlers[skyhookwebhook.ValidateSkyhookPath], req
}

// The benchmark's request is admitted, and mutation does what it should:
// every tagged image loses its tag and every package gets its name.
func TestBenchmarkRequestIsAdmitted(t *testing.T) {
	mutate, validate, req := setup(t)
	resp := mutate.Handle(context.Background(), req)
	if !resp.Allowed {
		t.Fatalf("mutation refused: %v", resp.Result)
	}
	var names, images int
	for _, op := range resp.Patches {
		switch {
		case strings.HasSuffix(op.Path, "/name"):
			names++
		case strings.HasSuffix(op.Path, "/image"):
			images++
		}
	}
	if names != 10 || images != 10 {
		t.Errorf("patch sets %d names and %d images, want 10 each: %v", names, images, resp.Patches)
	}
	if resp := validate.Handle(context.Background(), req); !resp.Allowed {
		t.Fatalf("validation refused: %v", resp.Result)
	}
}
