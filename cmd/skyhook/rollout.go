package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile"
)

// What the commands that name a rollout share. A name is one rollout
// whichever kinds of object carry it: a NodeWright, a Skyhook, or both (a
// Skyhook NodeWright's migration mirrored, or a manifest whose kind was
// renamed), and then the operator has one of them lead (reconcile.Leads:
// the NodeWright, unless it is being deleted and the Skyhook is not). The
// commands act on the leader, under its kind's keys, as the operator does.

// rolloutFlag is the flag naming a rollout: --nodewright, as NodeWright's
// kubectl plugin names it since its v0.3.0, and --skyhook, as this CLI
// and NodeWright's earlier plugin did. Either one works for either kind.
type rolloutFlag struct{ nodewright, skyhook string }

func addRolloutFlag(cmd *cobra.Command, f *rolloutFlag, usage string) {
	cmd.Flags().StringVar(&f.nodewright, "nodewright", "", usage)
	cmd.Flags().StringVar(&f.skyhook, "skyhook", "", "the same as --nodewright (either names a NodeWright or a Skyhook)")
}

// name is the rollout the flags name, "" when neither is given.
func (f *rolloutFlag) name() (string, error) {
	if f.nodewright != "" && f.skyhook != "" && f.nodewright != f.skyhook {
		return "", fmt.Errorf("--nodewright %q and --skyhook %q name different rollouts: give one of them", f.nodewright, f.skyhook)
	}
	if f.nodewright != "" {
		return f.nodewright, nil
	}
	return f.skyhook, nil
}

// required is name, which must be given.
func (f *rolloutFlag) required() (string, error) {
	name, err := f.name()
	if err == nil && name == "" {
		err = errors.New("--nodewright flag is required (--skyhook is its alias)")
	}
	return name, err
}

// kindWord is how messages call a rollout of which no object exists: as
// the flag the user gave names it.
func (f *rolloutFlag) kindWord() string {
	if f.nodewright != "" {
		return rollouts.NodeWrights.Kind
	}
	return rollouts.Skyhooks.Kind
}

// rollout is a name and the objects that carry it, as views.
type rollout struct {
	name string
	// leader is the object the operator rolls the name out with, nil when
	// no object has the name; twin is the other kind's, nil when none.
	leader, twin *skyhookv1.Skyhook
}

// findRollout reads the objects of both kinds with the name. A kind the
// cluster does not serve (a cluster without NodeWright's CRD) has none.
func findRollout(ctx context.Context, c client.Reader, name string) (*rollout, error) {
	r := &rollout{name: name}
	for _, k := range rollouts.Kinds {
		obj := k.New()
		err := c.Get(ctx, client.ObjectKey{Name: name}, obj)
		switch {
		case err == nil && r.leader == nil:
			r.leader = k.View(obj)
		case err == nil:
			r.twin = k.View(obj)
		case !apierrors.IsNotFound(err) && !meta.IsNoMatchError(err):
			return nil, fmt.Errorf("getting %s %q: %w", k.Kind, name, err)
		}
	}
	if r.twin != nil && !reconcile.Leads(r.leader, r.twin) {
		r.leader, r.twin = r.twin, r.leader
	}
	return r, nil
}

// existingRollout is findRollout of a name that must have an object.
func existingRollout(ctx context.Context, c client.Reader, name string) (*skyhookv1.Skyhook, error) {
	r, err := findRollout(ctx, c, name)
	if err != nil {
		return nil, err
	}
	if r.leader == nil {
		return nil, fmt.Errorf("no NodeWright or Skyhook named %q: not found", name)
	}
	return r.leader, nil
}

// kindOf names the kind of the object a view stands for: NodeWright or
// Skyhook.
func kindOf(sk *skyhookv1.Skyhook) string { return skyhookv1.KindOf(sk).Kind }

// objectOf is an object of the view's own kind with its name, to patch:
// patching the view itself would patch the Skyhook of that name.
func objectOf(sk *skyhookv1.Skyhook) client.Object {
	obj := rollouts.Of(sk).New()
	obj.SetName(sk.Name)
	return obj
}

// leadingRollouts are the rollouts of every kind the cluster serves, each
// name once (its leader), sorted by name.
func leadingRollouts(ctx context.Context, c client.Reader) ([]*skyhookv1.Skyhook, error) {
	byName := map[string][]*skyhookv1.Skyhook{}
	for _, k := range rollouts.Kinds {
		views, err := k.List(ctx, c)
		if meta.IsNoMatchError(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("listing %s: %w", k.Plural, err)
		}
		for _, v := range views {
			byName[v.Name] = append(byName[v.Name], v)
		}
	}
	out := make([]*skyhookv1.Skyhook, 0, len(byName))
	for _, views := range byName {
		if len(views) == 2 && !reconcile.Leads(views[0], views[1]) {
			views[0] = views[1]
		}
		out = append(out, views[0])
	}
	slices.SortFunc(out, func(a, b *skyhookv1.Skyhook) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// leaderKinds maps each rollout's name to its leader's kind: where its
// record on a node is read first.
func leaderKinds(ctx context.Context, c client.Reader) (map[string]skyhookv1.RolloutKind, error) {
	views, err := leadingRollouts(ctx, c)
	if err != nil {
		return nil, err
	}
	out := map[string]skyhookv1.RolloutKind{}
	for _, v := range views {
		out[v.Name] = skyhookv1.KindOf(v)
	}
	return out, nil
}
