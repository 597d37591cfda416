package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// newValidateCommand checks packages the way the agent does
// (skyhook-agent validate), before they are built into an image.
func newValidateCommand() *cobra.Command {
	var configOnly, insecure bool
	var verifyKey string
	cmd := &cobra.Command{
		Use:   "validate <package-dir|config.json|oci://<registry>/<repository>:<tag>>...",
		Short: "Check packages: config.json v1 and the steps it names; or a published package set",
		Long: "Checks each package's config.json against the v1 format (fields, types, modes, check modes,\n" +
			"upgrade steps, step names) and that every step path exists in skyhook_dir and is executable.\n" +
			"Prints every problem with its location; exits non-zero when there is one.\n" +
			"With --config-only the step files are not looked for (a config.json on its own).\n" +
			"An oci:// argument is a package set `skyhook push` published: its manifests are checked as\n" +
			"push checks them, and with --verify-key its signature first.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ok := true
			for _, path := range args {
				if strings.HasPrefix(path, "oci://") {
					ok = validateArtifact(cmd, path, verifyKey, insecure) && ok
					continue
				}
				ok = pkgconfig.Report(cmd.OutOrStdout(), path, !configOnly) && ok
			}
			if !ok {
				cmd.SilenceUsage = true
				return errors.New("invalid packages")
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&configOnly, "config-only", false, "check config.json alone, not the step files it names")
	cmd.Flags().StringVar(&verifyKey, "verify-key", "", "an oci:// package set must be signed by this public key (cosign.pub)")
	cmd.Flags().BoolVar(&insecure, "insecure", false, "talk plain HTTP to the registry of an oci:// argument")
	return cmd
}

// validateArtifact fetches a published package set (verified when
// verifyKey is set) and checks its manifests; it prints what is wrong and
// reports whether nothing was.
func validateArtifact(cmd *cobra.Command, url, verifyKey string, insecure bool) bool {
	dir, err := os.MkdirTemp("", "skyhook-validate-")
	if err != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %v\n", url, err)
		return false
	}
	defer func() { _ = os.RemoveAll(dir) }()
	if _, err := pullArtifact(cmd.Context(), url, dir, verifyKey, insecure); err != nil {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %v\n", url, err)
		return false
	}
	problems := check(dir)
	for _, p := range problems {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: %s\n", url, p)
	}
	if len(problems) == 0 {
		fmt.Fprintf(cmd.OutOrStdout(), "%s: ok\n", url)
	}
	return len(problems) == 0
}
