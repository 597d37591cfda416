// Package webhook holds the admission webhooks for Skyhook and
// DeploymentPolicy: validation that reports every violation by field path,
// defaulting, and image policy as code.
package webhook
