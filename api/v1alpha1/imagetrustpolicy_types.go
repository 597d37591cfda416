package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// An ImageTrustPolicy is checked when it is written (keys and trusted
// roots parse, expressions compile: webhook/trust), so one in the cluster
// is one admission can verify with; it has no status.

// ImageTrustPolicyKind is the kind name of ImageTrustPolicy objects.
const ImageTrustPolicyKind = "ImageTrustPolicy"

// ImageTrustPolicySpec names the package images it governs and whose
// signature they must carry. Admission verifies every package of a Skyhook
// or NodeWright whose image a policy matches, and pins the verified digest
// in the package's containerSHA.
type ImageTrustPolicySpec struct {
	// Images are patterns matched against a package's image without its tag
	// or digest, as written and fully qualified (docker.io/library/x is
	// also index.docker.io/library/x): "*" matches any run of characters,
	// "/" included, and "?" one character. A package every matching
	// policy's authorities vouch for is admitted.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:items:MinLength=1
	// +kubebuilder:validation:items:MaxLength=512
	// +required
	Images []string `json:"images"`

	// Mode is what an image that is not verified does: Enforce (the
	// default) refuses the Skyhook naming the package, the image and the
	// reason; Audit admits it with a warning and a Warning event.
	// +kubebuilder:validation:Enum=Enforce;Audit
	// +kubebuilder:default=Enforce
	// +optional
	Mode TrustMode `json:"mode,omitempty"`

	// Authorities are the signers the policy trusts; a signature from any
	// one of them verifies an image.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	Authorities []TrustAuthority `json:"authorities"`
}

// TrustMode is what an unverified image does.
type TrustMode string

// The modes.
const (
	TrustEnforce TrustMode = "Enforce"
	TrustAudit   TrustMode = "Audit"
)

// TrustAuthority is one signer: a public key, or a keyless identity
// (a certificate issued for an OIDC identity by the certificate authority
// of a trusted root).
// +kubebuilder:validation:XValidation:rule="has(self.key) != has(self.keyless)",message="exactly one of key and keyless must be set"
type TrustAuthority struct {
	// Name identifies the authority in refusals and warnings.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=63
	// +required
	Name string `json:"name"`

	// Key is a public key (PEM, as `cosign generate-key-pair` writes
	// cosign.pub) whose signature is accepted without a transparency log.
	// +optional
	Key *KeyAuthority `json:"key,omitempty"`

	// Keyless accepts a certificate for an identity, verified against the
	// trusted root given, with a timestamp from its transparency log or
	// timestamp authority.
	// +optional
	Keyless *KeylessAuthority `json:"keyless,omitempty"`
}

// KeyAuthority is a public key.
type KeyAuthority struct {
	// PublicKey is the key, PEM encoded (ECDSA, RSA or Ed25519).
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=16384
	// +required
	PublicKey string `json:"publicKey"`
}

// KeylessAuthority is an identity of a certificate authority.
// +kubebuilder:validation:XValidation:rule="has(self.subject) != has(self.subjectRegExp)",message="exactly one of subject and subjectRegExp must be set"
// +kubebuilder:validation:XValidation:rule="has(self.issuer) != has(self.issuerRegExp)",message="exactly one of issuer and issuerRegExp must be set"
type KeylessAuthority struct {
	// Issuer is the OIDC issuer the certificate must name, exactly.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Issuer string `json:"issuer,omitempty"`
	// IssuerRegExp is a regular expression the issuer must match.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	IssuerRegExp string `json:"issuerRegExp,omitempty"`
	// Subject is the identity (an e-mail, a workflow URI) the certificate
	// must name, exactly.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Subject string `json:"subject,omitempty"`
	// SubjectRegExp is a regular expression the subject must match.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	SubjectRegExp string `json:"subjectRegExp,omitempty"`
	// TrustedRoot is a Sigstore trusted root (trusted_root.json, as `cosign
	// trusted-root create` writes it): the certificate authorities,
	// transparency logs and timestamp authorities to trust. It is given
	// here, not fetched, since the cluster may be offline.
	// +kubebuilder:validation:MinLength=2
	// +kubebuilder:validation:MaxLength=262144
	// +required
	TrustedRoot string `json:"trustedRoot"`
}

// ImageTrustPolicy says whose signature the package images it matches must
// carry before a Skyhook or NodeWright running them is admitted.
// +kubebuilder:object:root=true
// +kubebuilder:resource:scope=Cluster,categories={skyhook-all}
// +kubebuilder:printcolumn:name="Mode",type=string,JSONPath=`.spec.mode`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ImageTrustPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ImageTrustPolicySpec `json:"spec,omitempty"`
}

// ImageTrustPolicyList is a list of ImageTrustPolicies.
// +kubebuilder:object:root=true
type ImageTrustPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ImageTrustPolicy `json:"items"`
}

func init() {
	SchemeBuilder.Register(&ImageTrustPolicy{}, &ImageTrustPolicyList{})
}
