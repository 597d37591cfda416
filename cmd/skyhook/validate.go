package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/skyhook-go/skyhook/agent/pkgconfig"
)

// newValidateCommand checks packages the way the agent does
// (skyhook-agent validate), before they are built into an image.
func newValidateCommand() *cobra.Command {
	var configOnly bool
	cmd := &cobra.Command{
		Use:   "validate <package-dir|config.json>...",
		Short: "Check packages: config.json v1 and the steps it names",
		Long: "Checks each package's config.json against the v1 format (fields, types, modes, check modes,\n" +
			"upgrade steps, step names) and that every step path exists in skyhook_dir and is executable.\n" +
			"Prints every problem with its location; exits non-zero when there is one.\n" +
			"With --config-only the step files are not looked for (a config.json on its own).",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ok := true
			for _, path := range args {
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
	return cmd
}
