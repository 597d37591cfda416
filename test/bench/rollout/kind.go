package main

import (
	"context"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// benchRollout is the object the benchmark rolls out: a Skyhook, or with
// -kind nodewright a NodeWright of the same spec, which the same engine
// rolls out under its own keys.
type benchRollout struct {
	ref skyhookv1.RolloutRef
	cl  client.Client
}

// kindOf reads -kind.
func kindOf(name string) (skyhookv1.RolloutKind, error) {
	switch name {
	case "skyhook":
		return skyhookv1.Skyhooks, nil
	case "nodewright":
		return skyhookv1.NodeWrights, nil
	}
	return skyhookv1.RolloutKind{}, fmt.Errorf("-kind %q: want skyhook or nodewright", name)
}

// object is an empty object of the kind, named, and its spec and status.
func (r benchRollout) object() (client.Object, *skyhookv1.SkyhookSpec, *skyhookv1.SkyhookStatus) {
	meta := metav1.ObjectMeta{Name: r.ref.Name}
	if r.ref.Kind == skyhookv1.NodeWrights {
		nw := &nodewrightv1.NodeWright{ObjectMeta: meta}
		return nw, &nw.Spec, &nw.Status
	}
	sk := &skyhookv1.Skyhook{ObjectMeta: meta}
	return sk, &sk.Spec, &sk.Status
}

// create creates the rollout with the spec.
func (r benchRollout) create(ctx context.Context, spec skyhookv1.SkyhookSpec) error {
	obj, into, _ := r.object()
	*into = spec
	return r.cl.Create(ctx, obj)
}

// upgrade moves every package to version.
func (r benchRollout) upgrade(ctx context.Context, version string) error {
	obj, spec, _ := r.object()
	if err := r.cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
		return err
	}
	for name, p := range spec.Packages {
		p.Version = version
		spec.Packages[name] = p
	}
	return r.cl.Update(ctx, obj)
}

// waitReady polls the rollout until Ready for its generation.
func (r benchRollout) waitReady(ctx context.Context, every, timeout time.Duration) error {
	obj, _, status := r.object()
	return wait.PollUntilContextTimeout(ctx, every, timeout, true, func(ctx context.Context) (bool, error) {
		if err := r.cl.Get(ctx, client.ObjectKeyFromObject(obj), obj); err != nil {
			return false, nil
		}
		return conditions.IsTrue(obj.(conditions.Getter), meta.ReadyCondition) && status.ObservedGeneration == obj.GetGeneration(), nil
	})
}

// path is the rollout's URL path on the apiserver.
func (r benchRollout) path() string {
	gvk := r.ref.Kind.GroupVersionKind
	resource := "skyhooks"
	if r.ref.Kind == skyhookv1.NodeWrights {
		resource = "nodewrights"
	}
	return "/apis/" + gvk.GroupVersion().String() + "/" + resource + "/" + r.ref.Name
}
