package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// steering is a command that sets or clears one annotation of a Skyhook.
type steering struct {
	use, short, verb string
	annotation       string
	set              bool
}

var steerings = []steering{
	{"pause", "Stop new work on a Skyhook's nodes (running stages finish)", "pause", skyhookv1.PauseAnnotation, true},
	{"resume", "Let a paused Skyhook go on", "resume", skyhookv1.PauseAnnotation, false},
	{"disable", "Skip a Skyhook entirely (others are not held back by it)", "disable", skyhookv1.DisableAnnotation, true},
	{"enable", "Undo disable", "enable", skyhookv1.DisableAnnotation, false},
}

// newSteeringCommands are pause, resume, disable and enable. Each asks for
// confirmation unless -y, and --dry-run shows the change and has the API
// server check it without making it.
func newSteeringCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, s := range steerings {
		var yes, dryRun bool
		cmd := &cobra.Command{
			Use:   s.use + " <skyhook>",
			Short: s.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return s.run(cmd, args[0], yes, dryRun)
			},
		}
		addChangeFlags(cmd, &yes, &dryRun)
		cmds = append(cmds, cmd)
	}
	return cmds
}

func (s steering) run(cmd *cobra.Command, name string, yes, dryRun bool) error {
	c, _, err := kubeClient()
	if err != nil {
		return err
	}
	sk := &skyhookv1.Skyhook{}
	if err := c.Get(cmd.Context(), client.ObjectKey{Name: name}, sk); err != nil {
		return err
	}
	value := any(nil)
	edit := fmt.Sprintf("remove the annotation %s", s.annotation)
	if s.set {
		value = "true"
		edit = fmt.Sprintf("set the annotation %s=true", s.annotation)
	}
	if (sk.Annotations[s.annotation] == "true") == s.set {
		fmt.Fprintf(cmd.OutOrStdout(), "Skyhook %s: nothing to %s\n", name, s.verb)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{s.annotation: value}}})
	if err != nil {
		return err
	}
	return applyChange(cmd, fmt.Sprintf("%s Skyhook %s (%s)", s.verb, name, edit), yes, dryRun, func(opts ...client.PatchOption) error {
		return c.Patch(cmd.Context(), sk, client.RawPatch(types.MergePatchType, patch), opts...)
	})
}

// applyChange makes one change after confirmation (unless yes), or with dryRun
// only shows it and has the API server check it (patch gets
// client.DryRunAll).
func applyChange(cmd *cobra.Command, what string, yes, dryRun bool, patch func(...client.PatchOption) error) error {
	if dryRun {
		fmt.Fprintf(cmd.OutOrStdout(), "would %s\n", what)
		return patch(client.DryRunAll)
	}
	if !yes && !confirm(cmd, capitalize(what)+"?") {
		return fmt.Errorf("not confirmed; nothing changed")
	}
	if err := patch(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "done: %s\n", what)
	return nil
}

// addChangeFlags are the flags of every command that changes something:
// -y/--yes and --dry-run (see applyChange).
func addChangeFlags(cmd *cobra.Command, yes, dryRun *bool) {
	cmd.Flags().BoolVarP(yes, "yes", "y", false, "do not ask for confirmation")
	cmd.Flags().BoolVar(yes, "confirm", false, "the same as --yes, as NodeWright's kubectl plugin spells it")
	cmd.Flags().BoolVar(dryRun, "dry-run", false, "show the change and have the API server check it, without making it")
}

// confirm asks a yes/no question on the command's input.
func confirm(cmd *cobra.Command, question string) bool {
	fmt.Fprintf(cmd.OutOrStdout(), "%s [y/N] ", question)
	answer, _ := bufio.NewReader(cmd.InOrStdin()).ReadString('\n')
	answer = strings.ToLower(strings.TrimSpace(answer))
	return answer == "y" || answer == "yes"
}

func capitalize(s string) string { return strings.ToUpper(s[:1]) + s[1:] }
