package webhook

import (
	"context"
	"net/http"

	admissionv1 "k8s.io/api/admission/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"sigs.k8s.io/controller-runtime/pkg/webhook/admission"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/webhook/defaults"
	"github.com/skyhook-go/skyhook/webhook/trust"
	"github.com/skyhook-go/skyhook/webhook/validate"
)

// admittedKind is a kind of rollout as admission sees it: how to read it
// (rollouts.Kind), its checks and its defaults. A Skyhook keeps the seeds'
// rules; a NodeWright gets NodeWright v0.20's (validate.NodeWright).
type admittedKind struct {
	*rollouts.Kind
	validate func(*skyhookv1.Skyhook, validate.PolicyExists) field.ErrorList
	defaults func(*skyhookv1.Skyhook, defaults.Options) []string
}

var (
	skyhooks    = &admittedKind{rollouts.Skyhooks, validate.Skyhook, defaults.Skyhook}
	nodeWrights = &admittedKind{rollouts.NodeWrights, validate.NodeWright, defaults.NodeWright}
)

// rolloutMutation is the mutating handler for the rollouts of one kind.
// controller-runtime's defaulter marshals the defaulted object and diffs
// the whole of it against the request (jsonpatch.CreatePatch): a fifth of
// the admission time of a ten-package Skyhook. The defaults touch a few
// known fields, so the patch is written for exactly those.
type rolloutMutation struct {
	opts Options
	kind *admittedKind
}

func (m rolloutMutation) Handle(ctx context.Context, req admission.Request) admission.Response {
	sk, err := m.kind.Decode(req.Object.Raw)
	if err != nil {
		return admission.Errored(http.StatusBadRequest, err)
	}
	before := sk.DeepCopy()
	warnings := m.kind.defaults(sk, m.opts.Defaults)
	if m.opts.Trust != nil && sk.DeletionTimestamp == nil {
		untrusted, trustWarnings, err := m.pinVerified(ctx, req, sk)
		if err != nil {
			return admission.Errored(http.StatusInternalServerError, err)
		}
		warnings = append(warnings, trustWarnings...)
		if len(untrusted) > 0 {
			return refused(m.kind.GroupKind(), sk.Name, untrusted, warnings)
		}
	}
	return admission.Patched("", skyhookPatch(before, sk)...).WithWarnings(warnings...)
}

// pinVerified verifies the packages that ImageTrustPolicies govern and
// records each verified digest in its containerSHA; it returns the
// failures of Enforce policies, and those of Audit ones as warnings (with
// an event unless the request is a dry run).
func (m rolloutMutation) pinVerified(ctx context.Context, req admission.Request, sk *skyhookv1.Skyhook) (field.ErrorList, []string, error) {
	var old *skyhookv1.Skyhook
	if req.Operation == admissionv1.Update && len(req.OldObject.Raw) > 0 {
		var err error
		if old, err = m.kind.Decode(req.OldObject.Raw); err != nil {
			return nil, nil, err
		}
	}
	outcome, err := m.opts.Trust.Check(ctx, trust.Packages(sk, old))
	if err != nil {
		return nil, nil, err
	}
	for key, digest := range outcome.Pins {
		pkg := sk.Spec.Packages[key]
		pkg.ContainerSHA = digest
		sk.Spec.Packages[key] = pkg
	}
	warnings := auditWarnings(m.opts.Events, sk, "UntrustedImage", outcome.Audited, req.DryRun != nil && *req.DryRun)
	return outcome.Refused, warnings, nil
}

// policyDefaulter fills in the defaults of a DeploymentPolicy of the
// seeds' group; nodeWrightPolicyDefaulter of NodeWright's.
type (
	policyDefaulter           struct{}
	nodeWrightPolicyDefaulter struct{}
)

func (policyDefaulter) Default(_ context.Context, dp *skyhookv1.DeploymentPolicy) error {
	defaults.DeploymentPolicy(dp)
	return nil
}

func (nodeWrightPolicyDefaulter) Default(_ context.Context, dp *nodewrightv1.DeploymentPolicy) error {
	view := dp.View()
	defaults.DeploymentPolicy(view)
	dp.Spec = view.Spec
	return nil
}
