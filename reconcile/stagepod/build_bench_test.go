package stagepod

import (
	"encoding/json"
	"testing"
)

// BenchmarkBuildPod builds the pod of one package's apply and config, and
// reports its size as JSON without a status: what each status write of the
// pod carries at least.
// go test ./reconcile/stagepod/ -run '^$' -bench BuildPod
func BenchmarkBuildPod(b *testing.B) {
	spec := runSpec()
	var size int
	for b.Loop() {
		encoded, err := json.Marshal(Build(spec))
		if err != nil {
			b.Fatal(err)
		}
		size = len(encoded)
	}
	b.ReportMetric(float64(size), "bytes/pod")
}
