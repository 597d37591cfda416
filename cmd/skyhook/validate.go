package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// newValidateCommand checks packages the way the agent does
// (skyhook-agent validate), before they are built into an image.
func newValidateCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "validate <package-dir|config.json>...",
		Short: "Check packages: config.json v1 and the steps it names",
		Long: "Checks each package's config.json against the v1 format (fields, types, modes, check modes,\n" +
			"upgrade steps, step names) and that every step path exists in skyhook_dir and is executable.\n" +
			"Prints every problem with its location; exits non-zero when there is one.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ok := true
			for _, path := range args {
				ok = pkgconfig.Report(cmd.OutOrStdout(), path) && ok
			}
			if !ok {
				cmd.SilenceUsage = true
				return errors.New("invalid packages")
			}
			return nil
		},
	}
}
