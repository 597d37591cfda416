package stagepod

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkBuildPodOfPackages builds the pod of one package's apply and
// config, and of five packages' (Spec.Next), and reports its size as JSON
// without a status: what each status write of the pod carries at least.
// go test ./reconcile/stagepod/ -run '^$' -bench BuildPodOf
func BenchmarkBuildPodOfPackages(b *testing.B) {
	for _, n := range []int{1, 5} {
		b.Run(fmt.Sprintf("packages=%d", n), func(b *testing.B) {
			spec := runSpec()
			for i := 1; i < n; i++ {
				next := runSpec()
				next.Package = fmt.Sprintf("pkg-%c", 'a'+i)
				spec.Next = append(spec.Next, next)
			}
			var size int
			for b.Loop() {
				encoded, err := json.Marshal(Build(spec))
				if err != nil {
					b.Fatal(err)
				}
				size = len(encoded)
			}
			b.ReportMetric(float64(size), "bytes/pod")
		})
	}
}
