package webhook_test

import (
	"context"
	"testing"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/test/testenv"
	"github.com/skyhook-go/skyhook/webhook/webhooktest"
)

// BenchmarkAdmissionThroughAPIServer is what `kubectl apply --dry-run=server`
// of a ten-package Skyhook costs end to end: the apiserver, both webhooks
// over TLS, the schema and the policies.
func BenchmarkAdmissionThroughAPIServer(b *testing.B) {
	c := testenv.Client(b, env)
	ctx := context.Background()
	samples := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		sk := webhooktest.TenPackages("bench")
		start := time.Now()
		if err := c.Create(ctx, sk, client.DryRunAll); err != nil {
			b.Fatal(err)
		}
		samples = append(samples, time.Since(start))
	}
	b.StopTimer()
	webhooktest.ReportPercentiles(b, samples)
}
