package run

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// BenchmarkTwentyTrueSteps runs a package whose apply mode is 20 steps of
// `true` (busybox, chrooted into a host root). The per-step figure is the
// agent's whole cost of a step: fork, chroot, exec, exit, output piping and
// the log file; the time to a step's first byte is within it.
func BenchmarkTwentyTrueSteps(b *testing.B) {
	root := newRoot(b)
	var steps []string
	for i := range 20 {
		steps = append(steps, fmt.Sprintf(`{"name":"s%d","path":"true"}`, i))
	}
	config := `{"schema_version":"v1","package_name":"tuning","package_version":"VERSION","modes":{"apply":[` +
		strings.Join(steps, ",") + `],"apply-check":[{"name":"c","path":"true"}]}}`
	p := newPackage(b, root, "1.0.0", config, map[string]string{"unused.sh": ""}, nil)
	data, err := os.ReadFile(busybox(b))
	if err != nil {
		b.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(p.copyDir, "skyhook_dir", "true"), data, 0o755); err != nil {
		b.Fatal(err)
	}
	var out bytes.Buffer
	o := options(p, "apply", "1.0.0", "1", &out)
	b.ResetTimer()
	for range b.N {
		if _, err := Run(context.Background(), o); err != nil {
			b.Fatalf("%v\n%s", err, out.String())
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/20/1000, "ms/step")
}
