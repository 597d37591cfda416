package policy

import (
	"context"
	"fmt"
	"sort"

	"github.com/kyverno/kyverno-json/pkg/apis/policy/v1alpha1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/tools/events"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Label marks the ConfigMaps, in the operator's namespace, whose data values
// are policies (ValidatingPolicy YAML, one or more documents per value).
const Label = "skyhook.nvidia.com/policy"

// ConfigMapReconciler keeps a Store's admin policies in step with the
// labelled ConfigMaps: add, change or delete one and the next admission
// request sees it, without a restart.
type ConfigMapReconciler struct {
	Client    client.Client
	Namespace string
	Store     *Store
	Recorder  events.EventRecorder
}

// Reconcile reloads every labelled ConfigMap. A ConfigMap that does not
// parse is skipped, with an event on it, and the others stay in force.
func (r *ConfigMapReconciler) Reconcile(ctx context.Context, _ ctrl.Request) (ctrl.Result, error) {
	var list corev1.ConfigMapList
	if err := r.Client.List(ctx, &list, client.InNamespace(r.Namespace), client.MatchingLabels{Label: "true"}); err != nil {
		return ctrl.Result{}, err
	}
	sort.Slice(list.Items, func(i, j int) bool { return list.Items[i].Name < list.Items[j].Name })
	var extra []*v1alpha1.ValidatingPolicy
	for i := range list.Items {
		cm := &list.Items[i]
		parsed, err := parseConfigMap(cm)
		if err != nil {
			log.FromContext(ctx).Error(err, "ignoring policy ConfigMap", "configmap", cm.Name)
			if r.Recorder != nil {
				r.Recorder.Eventf(cm, nil, corev1.EventTypeWarning, "InvalidPolicy", "LoadPolicy", "not loaded: %v", err)
			}
			continue
		}
		extra = append(extra, parsed...)
	}
	r.Store.SetExtra(extra)
	log.FromContext(ctx).Info("policies in force", "policies", r.Store.Current().Names())
	return ctrl.Result{}, nil
}

func parseConfigMap(cm *corev1.ConfigMap) ([]*v1alpha1.ValidatingPolicy, error) {
	keys := make([]string, 0, len(cm.Data))
	for k := range cm.Data {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var out []*v1alpha1.ValidatingPolicy
	for _, k := range keys {
		ps, err := Parse([]byte(cm.Data[k]))
		if err != nil {
			return nil, fmt.Errorf("key %s: %w", k, err)
		}
		out = append(out, ps...)
	}
	return out, nil
}

// SetupWithManager watches the labelled ConfigMaps of the namespace.
func (r *ConfigMapReconciler) SetupWithManager(mgr ctrl.Manager) error {
	match := func(o client.Object) bool {
		return o.GetNamespace() == r.Namespace && o.GetLabels()[Label] == "true"
	}
	labelled := predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return match(e.Object) },
		// Removing the label must unload the policies too.
		UpdateFunc:  func(e event.UpdateEvent) bool { return match(e.ObjectOld) || match(e.ObjectNew) },
		DeleteFunc:  func(e event.DeleteEvent) bool { return match(e.Object) },
		GenericFunc: func(e event.GenericEvent) bool { return match(e.Object) },
	}
	return ctrl.NewControllerManagedBy(mgr).
		Named("policy-configmaps").
		For(&corev1.ConfigMap{}, builder.WithPredicates(labelled)).
		Complete(r)
}
