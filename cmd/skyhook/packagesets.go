package main

import (
	"context"
	"fmt"

	"github.com/fluxcd/pkg/oci"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/packageset/manifests"
	"github.com/skyhook-go/skyhook/webhook/defaults"
	"github.com/skyhook-go/skyhook/webhook/validate"
)

// What push, pull and validate share about published package sets.

// pullArtifact fetches the artifact at url into dir, after verifying its
// signature when verifyKey names a public key.
func pullArtifact(ctx context.Context, url, dir, verifyKey string, insecure bool) (*oci.Metadata, error) {
	ref, err := oci.ParseArtifactURL(url)
	if err != nil {
		return nil, err
	}
	if verifyKey != "" {
		if ref, err = verifiedDigest(ctx, ref, verifyKey, insecure); err != nil {
			return nil, err
		}
	}
	meta, err := oci.NewClient(craneOptions(insecure)).Pull(ctx, ref, dir)
	if err != nil {
		return nil, fmt.Errorf("pulling %s: %w", url, err)
	}
	return meta, nil
}

// check reads the manifests of dir and judges each as the admission
// webhooks would (defaults applied first), except whether a named
// DeploymentPolicy exists, which only the cluster knows.
func check(dir string) []string {
	objects, problems := manifests.Load(dir)
	for _, o := range objects {
		var errs []string
		switch o.Object.GetKind() {
		case skyhookv1.SkyhookKind:
			sk := &skyhookv1.Skyhook{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object.Object, sk, true); err != nil {
				errs = append(errs, err.Error())
				break
			}
			if _, written, _ := unstructured.NestedFieldNoCopy(o.Object.Object, "spec", "priority"); !written {
				sk.Spec.Priority = skyhookv1.DefaultPriority // as the CRD schema defaults it
			}
			defaults.Skyhook(sk, defaults.Options{})
			for _, e := range validate.Skyhook(sk, nil) {
				errs = append(errs, e.Error())
			}
		case skyhookv1.DeploymentPolicyKind:
			dp := &skyhookv1.DeploymentPolicy{}
			if err := runtime.DefaultUnstructuredConverter.FromUnstructuredWithValidation(o.Object.Object, dp, true); err != nil {
				errs = append(errs, err.Error())
				break
			}
			defaults.DeploymentPolicy(dp)
			for _, e := range validate.DeploymentPolicy(dp) {
				errs = append(errs, e.Error())
			}
		}
		for _, e := range errs {
			problems = append(problems, fmt.Sprintf("%s: %s: %s", o.File, o.Name(), e))
		}
	}
	return problems
}
