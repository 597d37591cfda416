package webhook

import (
	"context"

	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/fleetbudget"
)

// ValidateNodeDisruptionBudgetPath serves the NodeDisruptionBudgets'
// validation.
const ValidateNodeDisruptionBudgetPath = "/validate-nodedisruptionbudget"

// +kubebuilder:webhook:path=/validate-nodedisruptionbudget,mutating=false,failurePolicy=fail,sideEffects=None,groups=skyhook.nvidia.com,resources=nodedisruptionbudgets,verbs=create;update,versions=v1alpha1,name=validate-nodedisruptionbudget.nvidia.com,admissionReviewVersions=v1

// budgetValidator refuses a NodeDisruptionBudget the rollouts could not
// read (a bad percent, a cron expression that is not one, a domain key that
// is not a label key), every problem by its field, with the checks the
// reconciler compiles it with (fleetbudget.Compile).
type budgetValidator struct{}

// ValidateCreate implements admission.Validator.
func (budgetValidator) ValidateCreate(_ context.Context, b *skyhookv1.NodeDisruptionBudget) (admission.Warnings, error) {
	_, errs := fleetbudget.Compile(b)
	return nil, invalid(skyhookv1.GroupVersion.WithKind(skyhookv1.NodeDisruptionBudgetKind).GroupKind(), b.Name, errs)
}

// ValidateUpdate implements admission.Validator.
func (v budgetValidator) ValidateUpdate(ctx context.Context, _, b *skyhookv1.NodeDisruptionBudget) (admission.Warnings, error) {
	if b.DeletionTimestamp != nil {
		return nil, nil
	}
	return v.ValidateCreate(ctx, b)
}

// ValidateDelete implements admission.Validator.
func (budgetValidator) ValidateDelete(context.Context, *skyhookv1.NodeDisruptionBudget) (admission.Warnings, error) {
	return nil, nil
}
