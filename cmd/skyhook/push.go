package main

import (
	"encoding/json"
	"fmt"
	"io"

	"github.com/fluxcd/pkg/oci"
	"github.com/sigstore/sigstore-go/pkg/sign"
	"github.com/spf13/cobra"

	"github.com/skyhook-go/skyhook/api/imagesig"
)

// newPushCommand publishes a directory of Skyhook and DeploymentPolicy
// manifests as a Flux OCI artifact (the format OCIRepository consumes),
// after checking them the way admission would.
func newPushCommand() *cobra.Command {
	var source, revision, signKey string
	var insecure bool
	cmd := &cobra.Command{
		Use:   "push <dir> oci://<registry>/<repository>:<tag>",
		Short: "Publish a package set as a Flux OCI artifact",
		Long: "Checks every manifest under <dir> (only Skyhook and DeploymentPolicy, each valid as the admission\n" +
			"webhooks would judge it, the existence of referenced DeploymentPolicies aside) and pushes the\n" +
			"directory as a Flux OCI artifact that an OCIRepository and a PackageSet can consume.\n" +
			"With --sign-key the artifact is signed as cosign v3 signs (a Sigstore bundle attached as an\n" +
			"OCI referrer), so that an OCIRepository's spec.verify (provider cosign) and `skyhook pull\n" +
			"--verify-key` accept it; an encrypted cosign key's password is read from $" + imagesig.PasswordEnv + ".",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			if problems := check(args[0]); len(problems) > 0 {
				cmd.SilenceUsage = true
				for _, p := range problems {
					fmt.Fprintln(cmd.ErrOrStderr(), p)
				}
				return fmt.Errorf("%d problems; nothing pushed", len(problems))
			}
			ref, err := oci.ParseArtifactURL(args[1])
			if err != nil {
				return err
			}
			var key sign.Keypair
			if signKey != "" {
				if key, err = loadSigningKey(signKey); err != nil {
					return fmt.Errorf("%w; nothing pushed", err)
				}
			}
			client := oci.NewClient(craneOptions(insecure))
			digest, err := client.Push(cmd.Context(), ref, args[0], oci.WithPushMetadata(oci.Metadata{Source: source, Revision: revision}))
			if err != nil {
				return fmt.Errorf("pushing %s: %w", args[1], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "pushed %s\n", digest)
			if key == nil {
				return nil
			}
			if err := signArtifact(cmd.Context(), digest, key, insecure); err != nil {
				return fmt.Errorf("signing %s (pushed, not signed): %w", digest, err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "signed %s\n", digest)
			return nil
		},
	}
	cmd.Flags().StringVar(&source, "source", "", "where the manifests come from (a Git URL), recorded in the artifact")
	cmd.Flags().StringVar(&revision, "revision", "", "the source revision (for example main@sha1:<commit>), recorded in the artifact")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "talk plain HTTP to the registry")
	cmd.Flags().StringVar(&signKey, "sign-key", "", "sign the pushed artifact with this private key (cosign.key, or PKCS #8 PEM)")
	refuseDryRun(cmd)
	return cmd
}

// newPullCommand fetches a Flux OCI artifact into a directory.
func newPullCommand() *cobra.Command {
	var insecure bool
	var verifyKey string
	cmd := &cobra.Command{
		Use:   "pull oci://<registry>/<repository>:<tag> <dir>",
		Short: "Fetch a package set published as a Flux OCI artifact",
		Long: "Fetches the artifact into <dir>. With --verify-key the tag's digest must carry a signature\n" +
			"of that public key (as `skyhook push --sign-key` or cosign v3 attach one), and that digest is\n" +
			"what is fetched; otherwise nothing is written.",
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			meta, err := pullArtifact(cmd.Context(), args[0], args[1], verifyKey, insecure)
			if err != nil {
				return err
			}
			return printMetadata(cmd.OutOrStdout(), meta)
		},
	}
	cmd.Flags().BoolVar(&insecure, "insecure", false, "talk plain HTTP to the registry")
	cmd.Flags().StringVar(&verifyKey, "verify-key", "", "fetch only if this public key (cosign.pub) signed the artifact")
	refuseDryRun(cmd)
	return cmd
}

func printMetadata(w io.Writer, meta *oci.Metadata) error {
	out, err := json.MarshalIndent(meta, "", "  ")
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(out))
	return err
}
