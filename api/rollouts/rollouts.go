// Package rollouts is how the operator reads the objects of every kind of
// rollout: the seeds' Skyhook and NodeWright's NodeWright. The rollout
// engine and admission work on a *skyhookv1.Skyhook: the object itself for
// a Skyhook, its View for a NodeWright (same spec and status types;
// skyhookv1.KindOf tells them apart, and with it every key, finalizer and
// annotation). What differs per kind is here: its objects and lists, its
// DeploymentPolicies, and how a view goes back into its object.
package rollouts

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/client"
	sigsjson "sigs.k8s.io/json"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Kind is one kind of rollout object and how to read it.
type Kind struct {
	skyhookv1.RolloutKind
	// New is a new, empty object of the kind.
	New func() client.Object
	// View is the engine's view of an object of the kind; Apply takes the
	// view's metadata and status back into the object.
	View  func(client.Object) *skyhookv1.Skyhook
	Apply func(client.Object, *skyhookv1.Skyhook)
	// List lists the kind's objects as views.
	List func(context.Context, client.Reader, ...client.ListOption) ([]*skyhookv1.Skyhook, error)
	// Policy is a new, empty DeploymentPolicy of the kind's group;
	// PolicyView reads one.
	Policy     func() client.Object
	PolicyView func(client.Object) *skyhookv1.DeploymentPolicy
}

// Decode reads an object of the kind from JSON (an admission request's),
// as its view.
func (k *Kind) Decode(raw []byte) (*skyhookv1.Skyhook, error) {
	obj := k.New()
	if err := sigsjson.UnmarshalCaseSensitivePreserveInts(raw, obj); err != nil {
		return nil, err
	}
	return k.View(obj), nil
}

// Kinds are the kinds, the seeds' first.
var Kinds = []*Kind{Skyhooks, NodeWrights}

// Skyhooks are the seeds' Skyhooks: the view is the object.
var Skyhooks = &Kind{
	RolloutKind: skyhookv1.Skyhooks,
	New:         func() client.Object { return &skyhookv1.Skyhook{} },
	View:        func(o client.Object) *skyhookv1.Skyhook { return o.(*skyhookv1.Skyhook) },
	Apply:       func(client.Object, *skyhookv1.Skyhook) {},
	List: func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]*skyhookv1.Skyhook, error) {
		var list skyhookv1.SkyhookList
		if err := c.List(ctx, &list, opts...); err != nil {
			return nil, err
		}
		out := make([]*skyhookv1.Skyhook, len(list.Items))
		for i := range list.Items {
			out[i] = &list.Items[i]
		}
		return out, nil
	},
	Policy:     func() client.Object { return &skyhookv1.DeploymentPolicy{} },
	PolicyView: func(o client.Object) *skyhookv1.DeploymentPolicy { return o.(*skyhookv1.DeploymentPolicy) },
}

// NodeWrights are NodeWright's NodeWrights, seen through their View.
var NodeWrights = &Kind{
	RolloutKind: skyhookv1.NodeWrights,
	New:         func() client.Object { return &nodewrightv1.NodeWright{} },
	View:        func(o client.Object) *skyhookv1.Skyhook { return o.(*nodewrightv1.NodeWright).View() },
	Apply:       func(o client.Object, view *skyhookv1.Skyhook) { o.(*nodewrightv1.NodeWright).Apply(view) },
	List: func(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]*skyhookv1.Skyhook, error) {
		var list nodewrightv1.NodeWrightList
		if err := c.List(ctx, &list, opts...); err != nil {
			return nil, err
		}
		out := make([]*skyhookv1.Skyhook, len(list.Items))
		for i := range list.Items {
			out[i] = list.Items[i].View()
		}
		return out, nil
	},
	Policy:     func() client.Object { return &nodewrightv1.DeploymentPolicy{} },
	PolicyView: func(o client.Object) *skyhookv1.DeploymentPolicy { return o.(*nodewrightv1.DeploymentPolicy).View() },
}

// Of is the kind of the rollout a view stands for.
func Of(sk *skyhookv1.Skyhook) *Kind {
	if skyhookv1.KindOf(sk) == skyhookv1.NodeWrights {
		return NodeWrights
	}
	return Skyhooks
}

// ListAll lists the rollouts of every kind, as views.
func ListAll(ctx context.Context, c client.Reader, opts ...client.ListOption) ([]*skyhookv1.Skyhook, error) {
	var out []*skyhookv1.Skyhook
	for _, k := range Kinds {
		views, err := k.List(ctx, c, opts...)
		if err != nil {
			return nil, err
		}
		out = append(out, views...)
	}
	return out, nil
}

// Twin is the other kind. An object of each kind under one name is one
// rollout: NodeWright's migration mirrors a Skyhook into a NodeWright of
// its name, and renaming a manifest's kind in Git gives the same pair.
func (k *Kind) Twin() *Kind {
	if k == NodeWrights {
		return Skyhooks
	}
	return NodeWrights
}
