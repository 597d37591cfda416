package main

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// What the commands that change something share: the question they ask
// unless told yes, --dry-run through the API server, and the report of
// the nodes they changed one by one.

// addConfirmFlags are the flags that skip the question of a command that
// changes something: -y/--yes, and --confirm as NodeWright's plugin spells
// it.
func addConfirmFlags(cmd *cobra.Command, yes *bool) {
	cmd.Flags().BoolVarP(yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(yes, "confirm", false, "the same as --yes, as NodeWright's kubectl plugin spells it")
}

// confirmed asks the question on the command's input unless yes. Anything
// but y or yes, and the end of the input, is a no: it prints "Aborted."
// and the command ends without an error, having changed nothing.
func confirmed(cmd *cobra.Command, yes bool, question string) bool {
	if yes {
		return true
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s [y/N]: ", question)
	answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(answer)) {
	case "y", "yes":
		return true
	}
	fmt.Fprintln(cmd.OutOrStdout(), "Aborted.")
	return false
}

// withDryRun are the patch options of a change --dry-run only previews:
// the API server checks it (admission, permissions) and stores nothing.
func withDryRun(cmd *cobra.Command) []client.PatchOption {
	if dryRun(cmd) {
		return []client.PatchOption{client.DryRunAll}
	}
	return nil
}

// reportNodeChanges ends a command that changed nodes one by one: the
// nodes it could not change (an error), and what it did; with --dry-run
// only that nothing changed.
func reportNodeChanges(cmd *cobra.Command, failed []string, success string, changed int) error {
	out := cmd.OutOrStdout()
	if len(failed) > 0 {
		fmt.Fprintf(out, "\nErrors updating some nodes:\n")
		for _, f := range failed {
			fmt.Fprintf(out, "  - %s\n", f)
		}
	}
	switch {
	case dryRun(cmd):
		fmt.Fprintf(out, "\n[dry-run] No changes applied\n")
	case changed > 0:
		fmt.Fprintf(out, "\n%s\n", success)
	}
	if len(failed) > 0 {
		return errors.New(strconv.Itoa(len(failed)) + " node(s) could not be changed")
	}
	return nil
}
