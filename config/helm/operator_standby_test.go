package helm_test

import (
	"fmt"
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/config"
	"github.com/skyhook-go/skyhook/config/helm"
)

// The chart runs two replicas with leader election: the one that is not
// the leader must still serve its webhooks and report ready, or a
// Deployment of two is never available in full (helm install --wait
// times out) and a rolling update stalls. Both start from the rendered
// Deployment's args; both must become ready while one holds the Lease.
func TestStandbyReplicaIsReady(t *testing.T) {
	crds, err := config.CRDs()
	if err != nil {
		t.Fatal(err)
	}
	if err := env.InstallCRDs(envtest.CRDInstallOptions{CRDs: crds}); err != nil {
		t.Fatal(err)
	}
	rel := helm.Release{Name: "skyhook-operator", Namespace: "skyhook-standby"}
	kubectl(t, "create", "namespace", rel.Namespace)
	container := deployment(t, render(t, rel, nil)).Spec.Template.Spec.Containers[0]
	manager := buildManager(t)
	for replica := range 2 {
		ports, err := proc.FreePorts(3)
		if err != nil {
			t.Fatal(err)
		}
		args := append(expand(container.Args, rel.Namespace),
			"--local-webhook-host=localhost", fmt.Sprintf("--webhook-port=%d", ports[0]), "--cert-dir="+t.TempDir(),
			fmt.Sprintf("--metrics-bind-address=127.0.0.1:%d", ports[1]), fmt.Sprintf("--health-probe-bind-address=127.0.0.1:%d", ports[2]))
		operator := start(t, manager, args, podEnv(container.Env, rel.Namespace))
		// The first becomes the leader; the second is ready as the standby.
		operator.waitReady(t, fmt.Sprintf("http://127.0.0.1:%d/readyz", ports[2]))
		t.Logf("replica %d ready", replica+1)
	}
	holder := kubectl(t, "get", "lease", "-n", rel.Namespace, "skyhook-operator.skyhook.nvidia.com", "-o", "jsonpath={.spec.holderIdentity}")
	if holder == "" {
		t.Error("no replica holds the leader Lease: the test did not run a leader and a standby")
	}
}
