// Package crdschema judges an object against a CustomResourceDefinition's
// schema in process, as the apiserver does before it stores a custom
// resource: unknown fields pruned, defaults applied, then the OpenAPI
// schema and its CEL rules (x-kubernetes-validations). It uses the
// apiserver's own code (k8s.io/apiextensions-apiserver), so that a fuzz
// target can put many thousands of objects through the admission a CRD
// without webhooks gets, where a real apiserver takes milliseconds each.
//
// What it leaves out: metadata validation beyond the schema's, ratcheting
// of updates, and the apiserver's limits on request size.
package crdschema

import (
	"context"
	"fmt"

	apiextensionsinternal "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	structuralschema "k8s.io/apiextensions-apiserver/pkg/apiserver/schema"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/cel"
	structuraldefaulting "k8s.io/apiextensions-apiserver/pkg/apiserver/schema/defaulting"
	"k8s.io/apiextensions-apiserver/pkg/apiserver/schema/pruning"
	apiservervalidation "k8s.io/apiextensions-apiserver/pkg/apiserver/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	celconfig "k8s.io/apiserver/pkg/apis/cel"
)

// Validator judges objects of one version of a CRD.
type Validator struct {
	structural *structuralschema.Structural
	schema     apiservervalidation.SchemaValidator
	cel        *cel.Validator
}

// For returns the Validator of the CRD's version.
func For(crd *apiextensionsv1.CustomResourceDefinition, version string) (*Validator, error) {
	for _, v := range crd.Spec.Versions {
		if v.Name != version || v.Schema == nil || v.Schema.OpenAPIV3Schema == nil {
			continue
		}
		internal := &apiextensionsinternal.CustomResourceValidation{}
		if err := apiextensionsv1.Convert_v1_CustomResourceValidation_To_apiextensions_CustomResourceValidation(v.Schema, internal, nil); err != nil {
			return nil, err
		}
		structural, err := structuralschema.NewStructural(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, err
		}
		schema, _, err := apiservervalidation.NewSchemaValidator(internal.OpenAPIV3Schema)
		if err != nil {
			return nil, err
		}
		return &Validator{structural: structural, schema: schema, cel: cel.NewValidator(structural, true, celconfig.PerCallLimit)}, nil
	}
	return nil, fmt.Errorf("%s has no version %s with a schema", crd.Name, version)
}

// Validate prunes and defaults obj in place, as the apiserver stores it,
// and returns what the schema and its CEL rules refuse.
func (v *Validator) Validate(obj map[string]any) field.ErrorList {
	pruning.Prune(obj, v.structural, true)
	structuraldefaulting.Default(obj, v.structural)
	errs := apiservervalidation.ValidateCustomResource(nil, obj, v.schema)
	if v.cel != nil {
		celErrs, _ := v.cel.Validate(context.Background(), nil, v.structural, obj, nil, celconfig.RuntimeCELCostBudget)
		errs = append(errs, celErrs...)
	}
	return errs
}
