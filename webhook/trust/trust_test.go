package trust

import (
	"context"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/webhooktest"
)

// A policy that cannot verify (written past the webhook) refuses the
// images it matches, saying why, and leaves every other image alone; no
// registry is asked.
func TestBrokenPolicyRefusesOnlyWhatItMatches(t *testing.T) {
	broken := skyhookv1.ImageTrustPolicy{
		ObjectMeta: metav1.ObjectMeta{Name: "broken", UID: "u1", ResourceVersion: "1"},
		Spec: skyhookv1.ImageTrustPolicySpec{Images: []string{"registry.example/gpu/*"},
			Authorities: []skyhookv1.TrustAuthority{{Name: "k", Key: &skyhookv1.KeyAuthority{PublicKey: "not a key"}}}},
	}
	v := &Verifier{Policies: webhooktest.TrustPolicies{Items: []skyhookv1.ImageTrustPolicy{broken}}}
	out, err := v.Check(context.Background(), []Package{
		{Key: "governed", Image: "registry.example/gpu/tuning", Version: "1.0.0", Digest: "sha256:" + strings.Repeat("a", 64)},
		{Key: "other", Image: "registry.example/net/tuning", Version: "1.0.0"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Refused) != 1 || !strings.Contains(out.Refused[0].Error(), "spec.packages.governed.image") ||
		!strings.Contains(out.Refused[0].Error(), "ImageTrustPolicy broken cannot be used") {
		t.Fatalf("refused %v, want the governed package alone, with the policy's fault", out.Refused)
	}
	if len(out.Pins) != 0 {
		t.Errorf("pinned %v", out.Pins)
	}
}
