package webhook

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"

	admissionv1 "k8s.io/api/admission/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/webhook"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	"github.com/skyhook-go/skyhook/api/nodestate"
	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/defaults"
	"github.com/skyhook-go/skyhook/webhook/policy"
	"github.com/skyhook-go/skyhook/webhook/trust"
	"github.com/skyhook-go/skyhook/webhook/validate"
)

// The paths the handlers are served at; config/webhook/manifests.yaml (from
// the markers below) points the apiserver at them. NodeWright's kinds are
// served at the paths NodeWright v0.20 serves them at.
const (
	MutateSkyhookPath                      = "/mutate-skyhook"
	ValidateSkyhookPath                    = "/validate-skyhook"
	MutateDeploymentPolicyPath             = "/mutate-deploymentpolicy"
	ValidateDeploymentPolicyPath           = "/validate-deploymentpolicy"
	MutateNodeWrightPath                   = "/mutate-nodewright-nvidia-com-v1alpha1-nodewright"
	ValidateNodeWrightPath                 = "/validate-nodewright-nvidia-com-v1alpha1-nodewright"
	MutateNodeWrightDeploymentPolicyPath   = "/mutate-nodewright-nvidia-com-v1alpha1-deploymentpolicy"
	ValidateNodeWrightDeploymentPolicyPath = "/validate-nodewright-nvidia-com-v1alpha1-deploymentpolicy"
	ValidateImageTrustPolicyPath           = "/validate-imagetrustpolicy"
)

// +kubebuilder:webhook:path=/mutate-skyhook,mutating=true,failurePolicy=fail,sideEffects=None,groups=skyhook.nvidia.com,resources=skyhooks,verbs=create;update,versions=v1alpha1,name=mutate-skyhook.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-skyhook,mutating=false,failurePolicy=fail,sideEffects=None,groups=skyhook.nvidia.com,resources=skyhooks,verbs=create;update,versions=v1alpha1,name=validate-skyhook.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-deploymentpolicy,mutating=true,failurePolicy=fail,sideEffects=None,groups=skyhook.nvidia.com,resources=deploymentpolicies,verbs=create;update,versions=v1alpha1,name=mutate-deploymentpolicy.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-deploymentpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=skyhook.nvidia.com,resources=deploymentpolicies,verbs=create;update;delete,versions=v1alpha1,name=validate-deploymentpolicy.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-nodewright-nvidia-com-v1alpha1-nodewright,mutating=true,failurePolicy=fail,sideEffects=None,groups=nodewright.nvidia.com,resources=nodewrights,verbs=create;update,versions=v1alpha1,name=mutate-nodewright.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-nodewright-nvidia-com-v1alpha1-nodewright,mutating=false,failurePolicy=fail,sideEffects=None,groups=nodewright.nvidia.com,resources=nodewrights,verbs=create;update,versions=v1alpha1,name=validate-nodewright.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/mutate-nodewright-nvidia-com-v1alpha1-deploymentpolicy,mutating=true,failurePolicy=fail,sideEffects=None,groups=nodewright.nvidia.com,resources=deploymentpolicies,verbs=create;update,versions=v1alpha1,name=mutate-deploymentpolicy-nodewright.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-nodewright-nvidia-com-v1alpha1-deploymentpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=nodewright.nvidia.com,resources=deploymentpolicies,verbs=create;update;delete,versions=v1alpha1,name=validate-deploymentpolicy-nodewright.nvidia.com,admissionReviewVersions=v1
// +kubebuilder:webhook:path=/validate-imagetrustpolicy,mutating=false,failurePolicy=fail,sideEffects=None,groups=skyhook.nvidia.com,resources=imagetrustpolicies,verbs=create;update,versions=v1alpha1,name=validate-imagetrustpolicy.nvidia.com,admissionReviewVersions=v1

// Options configure the admission handlers.
type Options struct {
	// Reader looks up DeploymentPolicies and Skyhooks. The manager passes
	// its uncached API reader: a cache that lags could let a Skyhook name a
	// policy just deleted, or a policy be deleted just after a Skyhook began
	// to use it. Both lookups are rare (a Skyhook naming a policy, a policy
	// deleted).
	Reader client.Reader
	// Defaults are the operator-wide defaults.
	Defaults defaults.Options
	// Policies are the image and package policies in force; nil runs none.
	Policies *policy.Store
	// Events records the violations of Audit policies on the Skyhook; nil
	// records none.
	Events events.EventRecorder
	// Trust verifies package images against the ImageTrustPolicies and
	// pins what it verified; nil verifies nothing.
	Trust *trust.Verifier
}

// Register serves the handlers on server.
func Register(server webhook.Server, scheme *runtime.Scheme, opts Options) {
	for path, handler := range Handlers(scheme, opts) {
		server.Register(path, handler)
	}
}

// Handlers are the admission handlers by path.
func Handlers(scheme *runtime.Scheme, opts Options) map[string]*admission.Webhook {
	return map[string]*admission.Webhook{
		MutateSkyhookPath:                      {Handler: rolloutMutation{opts, skyhooks}},
		ValidateSkyhookPath:                    {Handler: &SkyhookValidator{opts, skyhooks}},
		MutateDeploymentPolicyPath:             admission.WithDefaulter[*skyhookv1.DeploymentPolicy](scheme, policyDefaulter{}),
		ValidateDeploymentPolicyPath:           admission.WithValidator[*skyhookv1.DeploymentPolicy](scheme, &DeploymentPolicyValidator{opts}),
		MutateNodeWrightPath:                   {Handler: rolloutMutation{opts, nodeWrights}},
		ValidateNodeWrightPath:                 {Handler: &SkyhookValidator{opts, nodeWrights}},
		MutateNodeWrightDeploymentPolicyPath:   admission.WithDefaulter[*nodewrightv1.DeploymentPolicy](scheme, nodeWrightPolicyDefaulter{}),
		ValidateNodeWrightDeploymentPolicyPath: admission.WithValidator[*nodewrightv1.DeploymentPolicy](scheme, &nodeWrightPolicyValidator{opts}),
		ValidateImageTrustPolicyPath:           admission.WithValidator[*skyhookv1.ImageTrustPolicy](scheme, trustPolicyValidator{}),
		ValidateNodeDisruptionBudgetPath:       admission.WithValidator[*skyhookv1.NodeDisruptionBudget](scheme, budgetValidator{}),
	}
}

// SkyhookValidator judges the rollouts of one kind (Skyhooks, NodeWrights):
// the checks of package validate for the kind, then the policies, all
// violations in one answer. It is an admission.Handler rather than
// controller-runtime's typed Validator so that the policies read the
// request's JSON as it came instead of encoding the object once more.
type SkyhookValidator struct {
	opts Options
	kind *admittedKind
}

// Handle implements admission.Handler.
func (v *SkyhookValidator) Handle(ctx context.Context, req admission.Request) admission.Response {
	if req.Operation != admissionv1.Create && req.Operation != admissionv1.Update {
		return admission.Allowed("")
	}
	sk, err := v.kind.Decode(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	if sk.DeletionTimestamp != nil {
		return admission.Allowed("") // finalizers must be removable whatever the spec says
	}
	errs := v.kind.validate(sk, v.policyExists(ctx))
	var warnings []string
	if req.Operation == admissionv1.Update {
		old, err := v.kind.Decode(req.OldObject.Raw)
		if err != nil {
			return admission.Errored(http.StatusBadRequest, err)
		}
		updateErrs, updateWarnings := validate.SkyhookUpdate(old, sk, v.recorded(ctx, skyhookv1.RefOf(sk)))
		errs, warnings = append(errs, updateErrs...), updateWarnings
	}
	if v.opts.Policies != nil {
		who := policy.Requester{Username: req.UserInfo.Username, Groups: req.UserInfo.Groups}
		enforced, audited := v.opts.Policies.Current().Evaluate(ctx, sk, req.Object.Raw, who)
		errs = append(errs, enforced...)
		warnings = append(warnings, v.audit(sk, audited, req.DryRun != nil && *req.DryRun)...)
	}
	if len(errs) == 0 {
		return admission.Allowed("").WithWarnings(warnings...)
	}
	return refused(v.kind.GroupKind(), sk.Name, errs, warnings)
}

// refused is the answer that refuses the object for errs (an Invalid
// status listing each by field) and still carries the warnings.
func refused(kind schema.GroupKind, name string, errs field.ErrorList, warnings []string) admission.Response {
	status := invalid(kind, name, errs).(apierrors.APIStatus).Status()
	return admission.Response{AdmissionResponse: admissionv1.AdmissionResponse{Allowed: false, Result: &status, Warnings: warnings}}
}

// audit turns the violations of Audit policies into admission warnings, and
// into one Warning event on the Skyhook unless the request is a dry run. One
// event, not one per violation: the event recorder folds events that differ
// only in their note into a series of the first.
func (v *SkyhookValidator) audit(sk *skyhookv1.Skyhook, violations field.ErrorList, dryRun bool) []string {
	return auditWarnings(v.opts.Events, sk, "PolicyViolation", violations, dryRun)
}

// auditWarnings are the violations as admission warnings, recorded as one
// Warning event of the reason on the rollout unless the request is a dry
// run.
func auditWarnings(events events.EventRecorder, sk *skyhookv1.Skyhook, reason string, violations field.ErrorList, dryRun bool) []string {
	warnings := make([]string, 0, len(violations))
	for _, e := range violations {
		warnings = append(warnings, e.Error())
	}
	if len(warnings) > 0 && events != nil && !dryRun {
		events.Eventf(sk, nil, corev1.EventTypeWarning, reason, "Admit", "%s", strings.Join(warnings, "; "))
	}
	return warnings
}

// recorded looks on the nodes for a package version still recorded for the
// rollout. It lists every node, uncached: it only runs when a package that
// declares uninstall support is removed or downgraded, which is rare.
func (v *SkyhookValidator) recorded(ctx context.Context, rollout skyhookv1.RolloutRef) validate.Recorded {
	if v.opts.Reader == nil {
		return nil
	}
	return func(pkg, version string) (bool, error) {
		var nodes corev1.NodeList
		if err := v.opts.Reader.List(ctx, &nodes); err != nil {
			return false, err
		}
		key := skyhookv1.NodeStateKey(pkg, version)
		for i := range nodes.Items {
			state, err := nodestate.Read(&nodes.Items[i], rollout)
			if err != nil {
				return false, err // names the node and the annotation
			}
			if _, ok := state[key]; ok {
				return true, nil
			}
		}
		return false, nil
	}
}

// policyExists looks up a DeploymentPolicy of the kind's group.
func (v *SkyhookValidator) policyExists(ctx context.Context) validate.PolicyExists {
	if v.opts.Reader == nil {
		return nil
	}
	return func(name string) (bool, error) {
		err := v.opts.Reader.Get(ctx, client.ObjectKey{Name: name}, v.kind.Policy())
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	}
}

// DeploymentPolicyValidator judges DeploymentPolicies, and refuses to delete
// one that Skyhooks still use.
type DeploymentPolicyValidator struct{ opts Options }

// ValidateCreate implements admission.Validator.
func (v *DeploymentPolicyValidator) ValidateCreate(_ context.Context, dp *skyhookv1.DeploymentPolicy) (admission.Warnings, error) {
	return nil, invalidPolicy(skyhookv1.GroupVersion.Group, dp.Name, validate.DeploymentPolicy(dp))
}

// ValidateUpdate implements admission.Validator.
func (v *DeploymentPolicyValidator) ValidateUpdate(_ context.Context, _, dp *skyhookv1.DeploymentPolicy) (admission.Warnings, error) {
	if dp.DeletionTimestamp != nil {
		return nil, nil
	}
	return nil, invalidPolicy(skyhookv1.GroupVersion.Group, dp.Name, validate.DeploymentPolicy(dp))
}

// ValidateDelete refuses while Skyhooks reference the policy, naming them.
func (v *DeploymentPolicyValidator) ValidateDelete(ctx context.Context, dp *skyhookv1.DeploymentPolicy) (admission.Warnings, error) {
	return nil, policyInUse(ctx, v.opts.Reader, rollouts.Skyhooks, dp.Name)
}

// policyInUse refuses the delete of a DeploymentPolicy while rollouts of
// the kind (the one its group serves) reference it, naming them.
func policyInUse(ctx context.Context, reader client.Reader, kind *rollouts.Kind, policy string) error {
	if reader == nil {
		return nil
	}
	views, err := kind.List(ctx, reader)
	if err != nil {
		return apierrors.NewInternalError(fmt.Errorf("listing %ss: %w", kind.Kind, err))
	}
	var users []string
	for _, sk := range views {
		if sk.Spec.DeploymentPolicy == policy && sk.DeletionTimestamp == nil {
			users = append(users, sk.Name)
		}
	}
	if len(users) == 0 {
		return nil
	}
	sort.Strings(users)
	return apierrors.NewForbidden(kind.GroupVersion().WithResource("deploymentpolicies").GroupResource(), policy,
		// NodeWright's words (a script may grep them), then what to do.
		fmt.Errorf("cannot delete DeploymentPolicy %q: still referenced by %d %s(s): [%s]; point them elsewhere first",
			policy, len(users), kind.Kind, strings.Join(users, " ")))
}

// nodeWrightPolicyValidator judges the DeploymentPolicies of NodeWright's
// group as the seeds' ones, and refuses to delete one NodeWrights use.
type nodeWrightPolicyValidator struct{ opts Options }

// ValidateCreate implements admission.Validator.
func (v *nodeWrightPolicyValidator) ValidateCreate(_ context.Context, dp *nodewrightv1.DeploymentPolicy) (admission.Warnings, error) {
	return nil, invalidPolicy(nodewrightv1.GroupVersion.Group, dp.Name, validate.DeploymentPolicy(dp.View()))
}

// ValidateUpdate implements admission.Validator.
func (v *nodeWrightPolicyValidator) ValidateUpdate(_ context.Context, _, dp *nodewrightv1.DeploymentPolicy) (admission.Warnings, error) {
	if dp.DeletionTimestamp != nil {
		return nil, nil
	}
	return nil, invalidPolicy(nodewrightv1.GroupVersion.Group, dp.Name, validate.DeploymentPolicy(dp.View()))
}

// ValidateDelete refuses while NodeWrights reference the policy, naming
// them.
func (v *nodeWrightPolicyValidator) ValidateDelete(ctx context.Context, dp *nodewrightv1.DeploymentPolicy) (admission.Warnings, error) {
	return nil, policyInUse(ctx, v.opts.Reader, rollouts.NodeWrights, dp.Name)
}

// invalidPolicy is invalid for a DeploymentPolicy of the group.
func invalidPolicy(group, name string, errs field.ErrorList) error {
	return invalid(schema.GroupKind{Group: group, Kind: skyhookv1.DeploymentPolicyKind}, name, errs)
}

// invalid is nil for no errors, else an Invalid status listing every error
// by field, which kubectl prints in full.
func invalid(kind schema.GroupKind, name string, errs field.ErrorList) error {
	if len(errs) == 0 {
		return nil
	}
	return apierrors.NewInvalid(kind, name, errs)
}

// trustPolicyValidator refuses an ImageTrustPolicy admission could not
// verify with (a key or trusted root that does not parse, a bad pattern or
// expression), naming the field.
type trustPolicyValidator struct{}

// ValidateCreate implements admission.Validator.
func (trustPolicyValidator) ValidateCreate(_ context.Context, p *skyhookv1.ImageTrustPolicy) (admission.Warnings, error) {
	return nil, invalid(skyhookv1.GroupVersion.WithKind(skyhookv1.ImageTrustPolicyKind).GroupKind(), p.Name, trust.Validate(p))
}

// ValidateUpdate implements admission.Validator.
func (v trustPolicyValidator) ValidateUpdate(ctx context.Context, _, p *skyhookv1.ImageTrustPolicy) (admission.Warnings, error) {
	if p.DeletionTimestamp != nil {
		return nil, nil
	}
	return v.ValidateCreate(ctx, p)
}

// ValidateDelete implements admission.Validator.
func (trustPolicyValidator) ValidateDelete(context.Context, *skyhookv1.ImageTrustPolicy) (admission.Warnings, error) {
	return nil, nil
}
