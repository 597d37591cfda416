package reconcile_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// A changed configMap runs the config stage again on every node, and only
// it: apply does not run again.
func TestConfigMapChangeRerunsConfig(t *testing.T) {
	createNodes(t, simnode.Numbered("config", 2, map[string]string{"pool": "config"})...)
	c := k8sClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	created := countStagePods(t, "config")

	p := pkg("1.0.0", "ghcr.io/x/tuning", nil)
	p.ConfigMap = map[string]string{"settings.conf": "mode=a"}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: "config"},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector: metav1.LabelSelector{MatchLabels: map[string]string{"pool": "config"}},
			Packages:     skyhookv1.Packages{"tuning": p},
		},
	}
	if err := c.Create(ctx, sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	waitSkyhook(t, "config", time.Minute, isReady)
	var node corev1.Node
	if err := c.Get(ctx, client.ObjectKey{Name: "config-0"}, &node); err != nil {
		t.Fatal(err)
	}
	first := node.Annotations[skyhookv1.ConfigAnnotation("config")]
	if first == "" {
		t.Fatal("no configMap hash recorded on the node")
	}

	if err := c.Get(ctx, client.ObjectKeyFromObject(sk), sk); err != nil {
		t.Fatal(err)
	}
	changed := sk.Spec.Packages["tuning"]
	changed.ConfigMap = map[string]string{"settings.conf": "mode=b"}
	sk.Spec.Packages["tuning"] = changed
	if err := c.Update(ctx, sk); err != nil {
		t.Fatal(err)
	}
	waitSkyhook(t, "config", time.Minute, func(s *skyhookv1.Skyhook) bool { return isReady(s) && s.Status.ObservedGeneration == 2 })

	if err := c.Get(ctx, client.ObjectKey{Name: "config-0"}, &node); err != nil {
		t.Fatal(err)
	}
	if node.Annotations[skyhookv1.ConfigAnnotation("config")] == first {
		t.Error("the recorded configMap hash did not change")
	}
	runs := created()
	for _, n := range []string{"config-0", "config-1"} {
		if runs[n+"/apply"] != 1 || runs[n+"/config"] != 2 {
			t.Errorf("%s: apply ran %d times, config %d times; want 1 and 2", n, runs[n+"/apply"], runs[n+"/config"])
		}
	}
}
