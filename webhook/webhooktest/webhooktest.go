// Package webhooktest holds what the admission tests and benchmarks share.
package webhooktest

import (
	"bytes"
	"context"
	"fmt"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// TenPackages is a valid Skyhook with ten packages, each with a configMap,
// a config interrupt, env, resources and a dependency on the previous one.
func TenPackages(name string) *skyhookv1.Skyhook {
	sk := &skyhookv1.Skyhook{
		TypeMeta:   metav1.TypeMeta{APIVersion: skyhookv1.GroupVersion.String(), Kind: skyhookv1.SkyhookKind},
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{"agentpool": "gpu"}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Percent: ptr.To(25)},
			Priority:           skyhookv1.DefaultPriority, // as the schema defaults it before admission
			Packages:           skyhookv1.Packages{},
		},
	}
	for i := range 10 {
		p := skyhookv1.Package{
			PackageRef: skyhookv1.PackageRef{Version: fmt.Sprintf("1.%d.0", i)},
			Image:      fmt.Sprintf("nvcr.io/nvidia/skyhook/pkg%d:1.%d.0", i, i),
			ConfigMap:  map[string]string{"settings.sh": "#!/bin/bash\necho hi\n", "extra.conf": "x=1"},
			ConfigInterrupts: map[string]skyhookv1.Interrupt{
				"*.sh": {Type: skyhookv1.InterruptService, Services: []string{"containerd"}},
			},
			Interrupt: &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot},
		}
		if i > 0 {
			p.DependsOn = map[string]string{fmt.Sprintf("package-%c", 'a'+i-1): fmt.Sprintf("1.%d.0", i-1)}
		}
		sk.Spec.Packages[fmt.Sprintf("package-%c", 'a'+i)] = p
	}
	return sk
}

// ReportPercentiles reports p50 and p99 of the samples as benchmark metrics.
func ReportPercentiles(b *testing.B, samples []time.Duration) {
	sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
	at := func(q float64) float64 { return float64(samples[int(q*float64(len(samples)-1))].Microseconds()) }
	b.ReportMetric(at(0.50), "p50-µs")
	b.ReportMetric(at(0.99), "p99-µs")
}

// Lines counts the lines written to it: one per request in the request log
// of go-containerregistry's registry, so a test counts the requests a
// registry served.
type Lines struct{ N *atomic.Int64 }

func (w Lines) Write(p []byte) (int, error) {
	w.N.Add(int64(bytes.Count(p, []byte("\n"))))
	return len(p), nil
}

// TrustPolicies reads fixed ImageTrustPolicies, in place of the manager's
// cache, for tests and benchmarks of the trust verifier alone.
type TrustPolicies struct {
	client.Reader
	Items []skyhookv1.ImageTrustPolicy
}

// List implements client.Reader for ImageTrustPolicyList.
func (p TrustPolicies) List(_ context.Context, list client.ObjectList, _ ...client.ListOption) error {
	l, ok := list.(*skyhookv1.ImageTrustPolicyList)
	if !ok {
		return fmt.Errorf("TrustPolicies lists ImageTrustPolicies, not %T", list)
	}
	l.Items = p.Items
	return nil
}
