package realnode

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// Three packages (base; extra; tool, which depends on base) run in one pod
// on the real kubelet: their init containers in dependency order, each
// package's config with its own configMap mounted.
func TestPackagesShareOnePodOnTheRealNode(t *testing.T) {
	needRealNode(t)
	op.With(t, func(o *operator.Options) { o.PackageRuns = true })
	const name = "shared-pod"
	out := outDir(t, name)
	pods := stagePodsCreated(t, name)
	packages := map[string]skyhookv1.Package{}
	for _, p := range []string{"base", "extra", "tool"} {
		packages[p] = markedPackage(p, markPackage(t, p))
	}
	tool := packages["tool"]
	tool.DependsOn = map[string]string{"base": "1.0.0"}
	packages["tool"] = tool
	create(t, onRealNode(name, packages))
	waitSkyhook(t, name, skyhookv1.StatusComplete, 3*time.Minute)

	if got := strings.Fields(readHost(t, filepath.Join(out, "order"))); !slices.Equal(got, []string{"base", "extra", "tool"}) {
		t.Errorf("the applies ran in the order %v, want base, extra, tool", got)
	}
	for _, p := range []string{"base", "extra", "tool"} {
		if got := readHost(t, filepath.Join(out, p+".txt")); got != p+" configured\n" {
			t.Errorf("%s's config copied %q from its configMap", p, got)
		}
	}
	var held []string
	for _, pod := range pods() {
		var names []string
		for _, view := range stagepod.Views(pod) {
			names = append(names, stagepod.PackageOf(view))
		}
		held = append(held, strings.Join(names, ","))
	}
	if !slices.Equal(held, []string{"base,extra,tool"}) {
		t.Errorf("stage pods hold %v, want one pod for all three", held)
	}
}
