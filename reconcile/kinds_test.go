package reconcile_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// kindCase is one kind of rollout a behaviour's test runs for. The engine
// is one, but each kind writes its own keys, labels, taint and events, so
// a behaviour that writes any of them is checked under both kinds.
type kindCase struct {
	*rollouts.Kind
	// prefix starts the names of the test's rollouts and nodes, so the
	// runs for the two kinds share no object (a NodeWright and a Skyhook
	// of one name are twins to the operator).
	prefix string
}

// eachKind runs test for a Skyhook and then for a NodeWright.
func eachKind(t *testing.T, test func(t *testing.T, k kindCase)) {
	for _, k := range []kindCase{{rollouts.Skyhooks, ""}, {rollouts.NodeWrights, "nw"}} {
		t.Run(k.RolloutKind.Kind, func(t *testing.T) { test(t, k) })
	}
}

// name is base as this kind's run names it.
func (k kindCase) name(base string) string { return k.prefix + base }

// ref is the rollout of this kind named base.
func (k kindCase) ref(base string) skyhookv1.RolloutRef { return k.Named(k.name(base)) }

// create creates the rollout of this kind named base with spec, and
// deletes it when the test ends.
func (k kindCase) create(t *testing.T, base string, spec skyhookv1.SkyhookSpec) {
	t.Helper()
	obj := k.New()
	obj.SetName(k.name(base))
	switch o := obj.(type) {
	case *skyhookv1.Skyhook:
		o.Spec = spec
	case *nodewrightv1.NodeWright:
		o.Spec = spec
	default:
		t.Fatalf("no spec for a %T", obj)
	}
	c := k8sClient(t)
	if err := c.Create(context.Background(), obj); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), obj) })
}

// edit changes the spec of the rollout of this kind named base, as an
// admin's edit would, trying again on a conflict.
func (k kindCase) edit(t *testing.T, base string, change func(*skyhookv1.SkyhookSpec)) {
	t.Helper()
	c := k8sClient(t)
	eventually(t, "the edit of "+k.name(base)+" to apply", func() bool {
		obj := k.New()
		if err := c.Get(context.Background(), client.ObjectKey{Name: k.name(base)}, obj); err != nil {
			return false
		}
		switch o := obj.(type) {
		case *skyhookv1.Skyhook:
			change(&o.Spec)
		case *nodewrightv1.NodeWright:
			change(&o.Spec)
		default:
			t.Fatalf("no spec for a %T", obj)
		}
		return c.Update(context.Background(), obj) == nil
	})
}

// wait polls the rollout of this kind named base, as the engine's view of
// it, until cond holds.
func (k kindCase) wait(t *testing.T, base string, timeout time.Duration, cond func(*skyhookv1.Skyhook) bool) *skyhookv1.Skyhook {
	t.Helper()
	c := k8sClient(t)
	obj := k.New()
	var view *skyhookv1.Skyhook
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
		if err := c.Get(ctx, client.ObjectKey{Name: k.name(base)}, obj); err != nil {
			return false, nil
		}
		view = k.View(obj)
		return cond(view), nil
	})
	if err != nil {
		status := any(nil)
		if view != nil {
			status = view.Status
		}
		t.Fatalf("%s: %v; status: %+v", k.ref(base), err, status)
	}
	return view
}
