// Package inprocess benchmarks the admission handlers without a cluster, so
// the numbers are the operator's own cost, free of the noise of a control
// plane running beside them.
package inprocess

import (
	"context"
	"encoding/json"
	"testing"
	"time"

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
	defaults, err := policy.Defaults()
	if err != nil {
		b.Fatal(err)
	}
	scheme := runtime.NewScheme()
	_ = skyhookv1.AddToScheme(scheme)
	handlers := skyhookwebhook.Handlers(scheme, skyhookwebhook.Options{Policies: policy.NewStore(defaults)})
	raw, err := json.Marshal(webhooktest.TenPackages("bench"))
	if err != nil {
		b.Fatal(err)
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "bench", Operation: admissionv1.Create, Name: "bench",
		Kind:   metav1.GroupVersionKind{Group: "skyhook.nvidia.com", Version: "v1alpha1", Kind: "Skyhook"},
		Object: runtime.RawExtension{Raw: raw},
	}}
	mutate, validate := handlers[skyhookwebhook.MutateSkyhookPath], handlers[skyhookwebhook.ValidateSkyhookPath]
	ctx := context.Background()
	samples := make([]time.Duration, 0, b.N)
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		if resp := mutate.Handle(ctx, req); !resp.Allowed {
			b.Fatalf("mutation refused: %v", resp.Result)
		}
		if resp := validate.Handle(ctx, req); !resp.Allowed {
			b.Fatalf("validation refused: %v", resp.Result)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	webhooktest.ReportPercentiles(b, samples)
}
