package reconcile_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// A configMap change of a key no configInterrupt names, on a package with
// an interrupt of its own, reruns config and stops there: the record stays
// at config, complete, and neither the package's interrupt nor a reboot
// follows, then or in any later pass (NodeWright's config-skyhook
// "no-interrupt update").
func TestConfigRerunWithoutInterruptStaysAtConfig(t *testing.T) {
	c := k8sClient(t)
	ctx := context.Background()
	createNodes(t, cluster.Node{Name: "cfgrerun-0", Labels: map[string]string{"pool": "cfgrerun"}})
	created := countStagePods(t, "cfgrerun")
	p := withInterrupt(pkg("1.0.0", "ghcr.io/x/driver", nil), skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot})
	p.ConfigMap = map[string]string{"driver.conf": "a", "notes.txt": "x"}
	p.ConfigInterrupts = map[string]skyhookv1.Interrupt{"driver.conf": {Type: skyhookv1.InterruptService, Services: []string{"driver"}}}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "cfgrerun"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "cfgrerun"}},
			Packages:     skyhookv1.Packages{"driver": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(ctx, sk) })
	waitSkyhook(t, "cfgrerun", time.Minute, isReady)
	eventually(t, "the install's reboot", func() bool { return hosts.Reboots()["cfgrerun-0"] == 1 })

	eventually(t, "the configMap change to apply", func() bool {
		var cur skyhookv1.Skyhook
		if err := c.Get(ctx, client.ObjectKey{Name: "cfgrerun"}, &cur); err != nil {
			return false
		}
		d := cur.Spec.Packages["driver"]
		d.ConfigMap["notes.txt"] = "y"
		cur.Spec.Packages["driver"] = d
		return c.Update(ctx, &cur) == nil
	})
	eventually(t, "the config rerun", func() bool { return created()["cfgrerun-0/config"] == 2 })
	waitSkyhook(t, "cfgrerun", time.Minute, isReady)
	time.Sleep(2 * time.Second) // passes after the rerun must not start the interrupt
	runs := created()
	if r := hosts.Reboots()["cfgrerun-0"]; r != 1 || runs["cfgrerun-0/interrupt"] != 1 || runs["cfgrerun-0/post-interrupt"] != 1 {
		t.Errorf("after a change of notes.txt: %d reboots, pods %v; want only the install's reboot, interrupt and post-interrupt", r, runs)
	}
	var state skyhookv1.NodeState
	if err := json.Unmarshal([]byte(getNode(t, "cfgrerun-0").Annotations[skyhookv1.NodeStateAnnotation("cfgrerun")]), &state); err != nil {
		t.Fatal(err)
	}
	if e := state["driver|1.0.0"]; e.Stage != skyhookv1.StageConfig || e.State != skyhookv1.StateComplete {
		t.Errorf("driver's record after the rerun: stage %s, state %s; want config, complete", e.Stage, e.State)
	}
	if !isReady(waitSkyhook(t, "cfgrerun", time.Second, func(*skyhookv1.Skyhook) bool { return true })) {
		t.Error("not Ready after the rerun")
	}
}
