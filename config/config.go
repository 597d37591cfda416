// Package config holds the deployable manifests of the operator: the
// generated CRDs (crd/bases), RBAC (rbac) and webhook configurations
// (webhook), and samples. The CRDs and webhooks are embedded so that the
// operator, the sandbox and the tests install exactly what is in the repo.
package config

import (
	"embed"
	"fmt"
	"io/fs"
	"strings"

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

//go:embed crd/bases/*.yaml webhook/manifests.yaml
var manifests embed.FS

// The names the operator gives its webhook configurations.
const (
	MutatingWebhookName   = "skyhook-mutating-webhooks"
	ValidatingWebhookName = "skyhook-validating-webhooks"
)

// WebhookConfigLabel marks both webhook configurations, as NodeWright
// v0.18+ marks its own, so that what selects them by label (NodeWright's
// runbooks: kubectl get mutatingwebhookconfiguration -l
// nodewright.nvidia.com/webhook-config) finds this operator's. Only the key
// matters to a selector; the value is "true".
const WebhookConfigLabel = "nodewright.nvidia.com/webhook-config"

// Webhooks returns the webhook configurations generated from the markers in
// package webhook, renamed, with each webhook's client config made by
// clientConfig from its path (a Service in a cluster, a URL for an operator
// running outside, as in the sandbox).
func Webhooks(clientConfig func(path string) admissionregistrationv1.WebhookClientConfig) (*admissionregistrationv1.MutatingWebhookConfiguration, *admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	data, err := manifests.ReadFile("webhook/manifests.yaml")
	if err != nil {
		return nil, nil, err
	}
	mutating := &admissionregistrationv1.MutatingWebhookConfiguration{}
	validating := &admissionregistrationv1.ValidatingWebhookConfiguration{}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		var probe struct{ Kind string }
		if err := yaml.Unmarshal([]byte(doc), &probe); err != nil {
			return nil, nil, err
		}
		switch probe.Kind {
		case "MutatingWebhookConfiguration":
			err = yaml.UnmarshalStrict([]byte(doc), mutating)
		case "ValidatingWebhookConfiguration":
			err = yaml.UnmarshalStrict([]byte(doc), validating)
		}
		if err != nil {
			return nil, nil, err
		}
	}
	mutating.Name, validating.Name = MutatingWebhookName, ValidatingWebhookName
	mutating.Labels = map[string]string{WebhookConfigLabel: "true"}
	validating.Labels = map[string]string{WebhookConfigLabel: "true"}
	for i := range mutating.Webhooks {
		mutating.Webhooks[i].ClientConfig = clientConfig(*mutating.Webhooks[i].ClientConfig.Service.Path)
	}
	for i := range validating.Webhooks {
		validating.Webhooks[i].ClientConfig = clientConfig(*validating.Webhooks[i].ClientConfig.Service.Path)
	}
	if len(mutating.Webhooks) == 0 || len(validating.Webhooks) == 0 {
		return nil, nil, fmt.Errorf("webhook/manifests.yaml lacks the mutating or validating webhooks")
	}
	return mutating, validating, nil
}

// CRDs returns the operator's CustomResourceDefinitions.
func CRDs() ([]*apiextensionsv1.CustomResourceDefinition, error) {
	files, err := fs.Glob(manifests, "crd/bases/*.yaml")
	if err != nil {
		return nil, err
	}
	crds := make([]*apiextensionsv1.CustomResourceDefinition, 0, len(files))
	for _, f := range files {
		data, err := manifests.ReadFile(f)
		if err != nil {
			return nil, err
		}
		crd := &apiextensionsv1.CustomResourceDefinition{}
		if err := yaml.UnmarshalStrict(data, crd); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		crds = append(crds, crd)
	}
	return crds, nil
}
