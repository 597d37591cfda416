package upstreame2e

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// cli/lifecycle: the CLI's pause, resume, disable and enable set and remove
// the Skyhook's pause and disable annotations, each on its own.
func TestCLILifecycle(t *testing.T) {
	s := newScenario(t, "cli/lifecycle")
	const name = "cli-lifecycle-test"

	s.step("reset-state")
	_, _ = s.cli("reset", name, "--confirm") // upstream: || true

	s.step("setup-skyhook")
	s.apply("skyhook.yaml")
	// Upstream polls `kubectl get skyhook` for 30 s.
	err := wait.PollUntilContextTimeout(context.Background(), 2*time.Second, execTimeout, true, func(ctx context.Context) (bool, error) {
		var sk unstructured.Unstructured
		sk.SetGroupVersionKind(skyhookv1.GroupVersion.WithKind(skyhookv1.SkyhookKind))
		return s.client.Get(ctx, client.ObjectKey{Name: name}, &sk) == nil, nil
	})
	if err != nil {
		t.Fatalf("the Skyhook was not created: %v", err)
	}

	s.step("test-pause")
	s.cliMust("pause", name, "--confirm")
	s.assert("assert-paused.yaml")

	s.step("test-resume")
	s.cliMust("resume", name)
	s.assert("assert-resumed.yaml")

	s.step("test-disable")
	s.cliMust("disable", name, "--confirm")
	s.assert("assert-disabled.yaml")

	s.step("test-enable")
	s.cliMust("enable", name)
	s.assert("assert-enabled.yaml")

	s.step("test-pause-and-disable")
	s.cliMust("pause", name, "--confirm")
	s.cliMust("disable", name, "--confirm")
	s.assert("assert-paused-and-disabled.yaml")
	s.cliMust("resume", name)
	s.assert("assert-still-disabled.yaml")
	s.cliMust("enable", name)

	s.step("cleanup")
	_, _ = s.kubectl("delete", "skyhook", name) // upstream: || true
}
