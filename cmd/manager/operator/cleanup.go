package operator

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/config"
)

// CleanupOptions configure Cleanup.
type CleanupOptions struct {
	// Certs is the running operator's certificate mode: with
	// CertsSelfManaged the operator made its webhook configurations, so
	// Cleanup deletes them; otherwise whoever installed them removes them.
	Certs string
	// Poll is how often Cleanup looks again while objects are going.
	Poll time.Duration
	// Out gets the progress lines.
	Out io.Writer
}

// Cleanup removes what the operator's objects leave behind before the
// operator itself is uninstalled (the Helm chart's pre-delete Job runs it):
// PackageSets first (they would create their Skyhooks again), then
// NodeWrights, Skyhooks and both groups' DeploymentPolicies, waiting until
// they are gone so that their finalizers run (and enabled uninstalls happen
// on the nodes) while the operator still runs; then the webhook
// configurations the operator made, which would otherwise refuse every
// Skyhook request once it is gone.
// It ends when ctx does, naming what is still there and why.
func Cleanup(ctx context.Context, cfg *rest.Config, opts CleanupOptions) error {
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	if opts.Poll == 0 {
		opts.Poll = 2 * time.Second
	}
	for _, kind := range []struct {
		name string
		list client.ObjectList
	}{
		{"PackageSet", &skyhookv1.PackageSetList{}},
		// Rollouts of both kinds before the policies, whose deletion
		// admission refuses while a rollout names them.
		{"NodeWright", &nodewrightv1.NodeWrightList{}},
		{"Skyhook", &skyhookv1.SkyhookList{}},
		{"DeploymentPolicy (nodewright.nvidia.com)", &nodewrightv1.DeploymentPolicyList{}},
		{"DeploymentPolicy", &skyhookv1.DeploymentPolicyList{}},
	} {
		if err := deleteAllAndWait(ctx, c, kind.name, kind.list, opts); err != nil {
			return err
		}
	}
	if opts.Certs != CertsSelfManaged {
		return nil
	}
	for _, obj := range []client.Object{
		&admissionregistrationv1.MutatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: config.MutatingWebhookName}},
		&admissionregistrationv1.ValidatingWebhookConfiguration{ObjectMeta: metav1.ObjectMeta{Name: config.ValidatingWebhookName}},
	} {
		if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("deleting %s: %w", obj.GetName(), err)
		}
		fmt.Fprintf(opts.Out, "deleted webhook configuration %s\n", obj.GetName())
	}
	return nil
}

// deleteAllAndWait deletes every object of list's kind and waits until none
// is left.
func deleteAllAndWait(ctx context.Context, c client.Client, kind string, list client.ObjectList, opts CleanupOptions) error {
	for {
		if err := c.List(ctx, list); err != nil {
			if meta.IsNoMatchError(err) || apierrors.IsNotFound(err) {
				return nil // the CRD is not installed: nothing to clean
			}
			return fmt.Errorf("listing %ss: %w", kind, err)
		}
		items, err := meta.ExtractList(list)
		if err != nil {
			return err
		}
		if len(items) == 0 {
			return nil
		}
		var left []string
		for _, item := range items {
			obj := item.(client.Object)
			if obj.GetDeletionTimestamp() == nil {
				if err := c.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
					return fmt.Errorf("deleting %s %s: %w", kind, name(obj), err)
				}
			}
			left = append(left, name(obj)+why(obj))
		}
		sort.Strings(left)
		fmt.Fprintf(opts.Out, "waiting for %d %s(s) to go: %s\n", len(left), kind, strings.Join(left, ", "))
		select {
		case <-ctx.Done():
			return fmt.Errorf("%d %s(s) still there when the cleanup ran out of time: %s", len(left), kind, strings.Join(left, ", "))
		case <-time.After(opts.Poll):
		}
	}
}

func name(obj client.Object) string {
	if obj.GetNamespace() != "" {
		return obj.GetNamespace() + "/" + obj.GetName()
	}
	return obj.GetName()
}

// why is a Skyhook's or NodeWright's DeletionBlocked message, which says
// what holds its deletion (paused, disabled with uninstalls pending, ...).
func why(obj client.Object) string {
	var conditions []metav1.Condition
	switch rollout := obj.(type) {
	case *skyhookv1.Skyhook:
		conditions = rollout.Status.Conditions
	case *nodewrightv1.NodeWright:
		conditions = rollout.Status.Conditions
	default:
		return ""
	}
	if c := meta.FindStatusCondition(conditions, skyhookv1.DeletionBlockedCondition); c != nil && c.Status == metav1.ConditionTrue {
		return " (" + c.Message + ")"
	}
	return ""
}
