package inprocess

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/sigstore/sigstore-go/pkg/sign"
	admissionv1 "k8s.io/api/admission/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/skyhook-go/skyhook/api/imagesig"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	skyhookwebhook "github.com/skyhook-go/skyhook/webhook"
	"github.com/skyhook-go/skyhook/webhook/policy"
	"github.com/skyhook-go/skyhook/webhook/trust"
	"github.com/skyhook-go/skyhook/webhook/webhooktest"
)

// signedTenPackages pushes and signs the ten packages' images to a registry
// on loopback and returns the Skyhook naming them and a policy over them.
func signedTenPackages(b *testing.B, requests *atomic.Int64) (*skyhookv1.Skyhook, skyhookv1.ImageTrustPolicy) {
	reg, err := nodeimages.StartRegistry(nodeimages.RegistryOptions{Log: webhooktest.Lines{N: requests}})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = reg.Close() })
	key, err := sign.NewEphemeralKeypair(nil)
	if err != nil {
		b.Fatal(err)
	}
	pub, err := key.GetPublicKeyPem()
	if err != nil {
		b.Fatal(err)
	}
	sk := webhooktest.TenPackages("bench")
	for k, pkg := range sk.Spec.Packages {
		img, err := random.Image(1024, 1)
		if err != nil {
			b.Fatal(err)
		}
		repo := strings.TrimPrefix(strings.SplitN(pkg.Image, ":", 2)[0], "nvcr.io/")
		ref, err := reg.Push(context.Background(), repo+":"+pkg.Version, img)
		if err != nil {
			b.Fatal(err)
		}
		d, err := name.NewDigest(ref)
		if err != nil {
			b.Fatal(err)
		}
		if err := imagesig.Sign(d, key, reg.RemoteOptions(context.Background())...); err != nil {
			b.Fatal(err)
		}
		pkg.Image = reg.Host() + "/" + repo + ":" + pkg.Version
		sk.Spec.Packages[k] = pkg
	}
	p := skyhookv1.ImageTrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", UID: "bench", ResourceVersion: "1"},
		Spec: skyhookv1.ImageTrustPolicySpec{Images: []string{reg.Host() + "/*"},
			Authorities: []skyhookv1.TrustAuthority{{Name: "k", Key: &skyhookv1.KeyAuthority{PublicKey: pub}}}},
	}
	return sk, p
}

// BenchmarkAdmissionVerifiedInProcess is the mutating and validating
// handlers for the ten-package Skyhook with every image under an
// ImageTrustPolicy, signed, in a registry on loopback:
//   - cold: a new operator each time (no kept result): ten tag lookups, ten
//     signature lookups and ten verifications;
//   - kept: the same digests verified before (another Skyhook of the same
//     packages): no registry request for the signatures, the tags still
//     resolved;
//   - reapply: an update that keeps every image and version: nothing
//     verified again, no registry request.
func BenchmarkAdmissionVerifiedInProcess(b *testing.B) {
	requests := &atomic.Int64{}
	sk, p := signedTenPackages(b, requests)
	scheme := runtime.NewScheme()
	_ = skyhookv1.AddToScheme(scheme)
	defaults, err := policy.Defaults()
	if err != nil {
		b.Fatal(err)
	}
	handlers := func() (mutate, validate *admission.Webhook) {
		h := skyhookwebhook.Handlers(scheme, skyhookwebhook.Options{Policies: policy.NewStore(defaults),
			Trust: &trust.Verifier{Policies: webhooktest.TrustPolicies{Items: []skyhookv1.ImageTrustPolicy{p}}}})
		return h[skyhookwebhook.MutateSkyhookPath], h[skyhookwebhook.ValidateSkyhookPath]
	}
	create := request(b, admissionv1.Create, sk, nil)
	b.Run("cold", func(b *testing.B) {
		runAdmission(b, create, requests, func() (*admission.Webhook, *admission.Webhook) { return handlers() })
	})
	mutate, validate := handlers()
	pinned := admit(b, mutate, create, sk)
	b.Run("kept", func(b *testing.B) {
		runAdmission(b, create, requests, func() (*admission.Webhook, *admission.Webhook) { return mutate, validate })
	})
	reapply := request(b, admissionv1.Update, sk, pinned)
	b.Run("reapply", func(b *testing.B) {
		runAdmission(b, reapply, requests, func() (*admission.Webhook, *admission.Webhook) { return mutate, validate })
	})
}

// runAdmission times the two handlers on req, each time with the handlers
// made fresh for it, and reports the registry requests per admission.
func runAdmission(b *testing.B, req admission.Request, requests *atomic.Int64, handlers func() (*admission.Webhook, *admission.Webhook)) {
	ctx := context.Background()
	samples := make([]time.Duration, 0, b.N)
	before := requests.Load()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		mutate, validate := handlers()
		b.StartTimer()
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
	b.ReportMetric(float64(requests.Load()-before)/float64(b.N), "registry-requests/op")
}

// admit runs the mutation once and returns sk as stored: every package
// pinned to the digest verified.
func admit(b *testing.B, mutate *admission.Webhook, req admission.Request, sk *skyhookv1.Skyhook) *skyhookv1.Skyhook {
	resp := mutate.Handle(context.Background(), req)
	if !resp.Allowed {
		b.Fatalf("mutation refused: %v", resp.Result)
	}
	stored := sk.DeepCopy()
	pins := 0
	for _, op := range resp.Patches {
		if key, ok := strings.CutSuffix(strings.TrimPrefix(op.Path, "/spec/packages/"), "/containerSHA"); ok {
			pkg := stored.Spec.Packages[key]
			pkg.ContainerSHA = op.Value.(string)
			pkg.Image = strings.TrimSuffix(pkg.Image, ":"+pkg.Version) // the tag goes, as defaults split it
			stored.Spec.Packages[key] = pkg
			pins++
		}
	}
	if pins != len(sk.Spec.Packages) {
		b.Fatalf("%d packages pinned, want %d: %v", pins, len(sk.Spec.Packages), resp.Patches)
	}
	return stored
}

// request is an admission request of the operation for sk (and old).
func request(b *testing.B, op admissionv1.Operation, sk, old *skyhookv1.Skyhook) admission.Request {
	raw, err := json.Marshal(sk)
	if err != nil {
		b.Fatal(err)
	}
	req := admission.Request{AdmissionRequest: admissionv1.AdmissionRequest{
		UID: "bench", Operation: op, Name: sk.Name,
		Kind:   metav1.GroupVersionKind{Group: "skyhook.nvidia.com", Version: "v1alpha1", Kind: "Skyhook"},
		Object: runtime.RawExtension{Raw: raw},
	}}
	if old != nil {
		if req.OldObject.Raw, err = json.Marshal(old); err != nil {
			b.Fatal(err)
		}
	}
	return req
}
