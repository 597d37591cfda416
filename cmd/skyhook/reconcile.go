package main

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// newReconcileCommand asks the operator for a reconcile now, the Flux way
// (the reconcile.fluxcd.io/requestedAt annotation), and waits until the
// operator says it handled that request.
func newReconcileCommand() *cobra.Command {
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "reconcile (skyhook|nodewright|packageset) <name>",
		Short: "Reconcile a Skyhook, a NodeWright or a PackageSet now and wait until the operator has",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, ns, err := kubeClient()
			if err != nil {
				return err
			}
			var obj client.Object
			switch args[0] {
			case "skyhook", "skyhooks":
				obj = &skyhookv1.Skyhook{}
				ns = ""
			case "nodewright", "nodewrights":
				obj = &nodewrightv1.NodeWright{}
				ns = ""
			case "packageset", "packagesets":
				obj = &skyhookv1.PackageSet{}
			default:
				return fmt.Errorf("%q: want skyhook, nodewright or packageset", args[0])
			}
			key := client.ObjectKey{Namespace: ns, Name: args[1]}
			if err := c.Get(cmd.Context(), key, obj); err != nil {
				return err
			}
			requested := time.Now().UTC().Format(time.RFC3339Nano)
			patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{meta.ReconcileRequestAnnotation: requested}}})
			if err := c.Patch(cmd.Context(), obj, client.RawPatch(types.MergePatchType, patch)); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "asked for a reconcile of %s %s\n", args[0], args[1])
			err = wait.PollUntilContextTimeout(cmd.Context(), 200*time.Millisecond, timeout, true, func(ctx context.Context) (bool, error) {
				if err := c.Get(ctx, key, obj); err != nil {
					return false, err
				}
				return handled(obj) == requested, nil
			})
			if err != nil {
				return fmt.Errorf("the operator did not handle the request within %s: %w", timeout, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s %s reconciled\n", args[0], args[1])
			return nil
		},
	}
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for the operator")
	refuseDryRun(cmd)
	return cmd
}

// handled is the last reconcile request the operator handled for obj.
func handled(obj client.Object) string {
	switch o := obj.(type) {
	case *skyhookv1.Skyhook:
		return o.Status.LastHandledReconcileAt
	case *nodewrightv1.NodeWright:
		return o.Status.LastHandledReconcileAt
	case *skyhookv1.PackageSet:
		return o.Status.LastHandledReconcileAt
	}
	return ""
}
