package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
)

// The flags every command takes, as NodeWright's kubectl plugin has them
// on its root: -o/--output, -v/--verbose and --dry-run (besides kubectl's
// connection flags, see addKubeFlags).
const (
	outputFlag  = "output"
	verboseFlag = "verbose"
	dryRunFlag  = "dry-run"

	// noDryRunAnnotation marks a command that changes something and cannot
	// preview it: it refuses --dry-run rather than go ahead.
	noDryRunAnnotation = "skyhook.dry-run-unsupported"
)

// The formats of -o. Tables are for people; json and yaml print the same
// rows as objects, for tools.
var (
	listFormats = []string{"table", "wide", "json", "yaml"}
	viewFormats = []string{"table", "json", "yaml"} // one object, no wider table
	planFormats = []string{"table", "json"}
)

// addGlobalFlags puts -o, -v and --dry-run on the root command, and checks
// -o (case-insensitive) before any command runs.
func addGlobalFlags(root *cobra.Command) {
	f := root.PersistentFlags()
	f.StringP(outputFlag, "o", "table", "output format: table, wide, json or yaml (commands that only print some of them say so; commands that change something ignore it)")
	f.BoolP(verboseFlag, "v", false, "also print warnings on stderr, such as records on nodes that cannot be read")
	f.Bool(dryRunFlag, false, "show what the command would change and have the API server check it, without changing anything")
	root.PersistentPreRunE = func(cmd *cobra.Command, _ []string) error {
		if o := outputFormat(cmd); !slices.Contains(listFormats, o) {
			return fmt.Errorf("invalid output format %q: --output takes %s", o, strings.Join(listFormats, ", "))
		}
		if dryRun(cmd) && cmd.Annotations[noDryRunAnnotation] != "" {
			return fmt.Errorf("--dry-run: %s cannot preview its changes", cmd.CommandPath())
		}
		return nil
	}
}

// refuseDryRun marks commands that change something without a preview.
func refuseDryRun(cmds ...*cobra.Command) {
	for _, c := range cmds {
		if c.Annotations == nil {
			c.Annotations = map[string]string{}
		}
		c.Annotations[noDryRunAnnotation] = "true"
	}
}

// outputFormat is -o, lower-cased.
func outputFormat(cmd *cobra.Command) string {
	o, _ := cmd.Flags().GetString(outputFlag)
	return strings.ToLower(o)
}

// checkOutput returns -o when the command prints that format, or an error
// naming the flag and the formats it prints.
func checkOutput(cmd *cobra.Command, formats []string) (string, error) {
	o := outputFormat(cmd)
	if !slices.Contains(formats, o) {
		return "", fmt.Errorf("invalid output format %q: %s takes --output %s", o, cmd.CommandPath(), strings.Join(formats, ", "))
	}
	return o, nil
}

func dryRun(cmd *cobra.Command) bool {
	v, _ := cmd.Flags().GetBool(dryRunFlag)
	return v
}

// warnf prints a warning on stderr with -v.
func warnf(cmd *cobra.Command, format string, args ...any) {
	if v, _ := cmd.Flags().GetBool(verboseFlag); v {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: "+format+"\n", args...)
	}
}
