package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// steering is a command that sets or clears one annotation of a Skyhook.
type steering struct {
	use, short, verb, done string
	annotation             string
	set                    bool
}

var steerings = []steering{
	{"pause", "Stop new work on a Skyhook's nodes (running stages finish)", "pause", "paused", skyhookv1.PauseAnnotation, true},
	{"resume", "Let a paused Skyhook go on", "resume", "resumed", skyhookv1.PauseAnnotation, false},
	{"disable", "Skip a Skyhook entirely (others are not held back by it)", "disable", "disabled", skyhookv1.DisableAnnotation, true},
	{"enable", "Undo disable", "enable", "enabled", skyhookv1.DisableAnnotation, false},
}

// newSteeringCommands are pause, resume, disable and enable. Each asks for
// confirmation unless -y, and --dry-run shows the change and has the API
// server check it without making it.
func newSteeringCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, s := range steerings {
		var yes bool
		cmd := &cobra.Command{
			Use:   s.use + " <skyhook>",
			Short: s.short,
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return s.run(cmd, args[0], yes)
			},
		}
		addConfirmFlags(cmd, &yes)
		cmds = append(cmds, cmd)
	}
	return cmds
}

func (s steering) run(cmd *cobra.Command, name string, yes bool) error {
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
	apply := func(opts ...client.PatchOption) error {
		return c.Patch(cmd.Context(), sk, client.RawPatch(types.MergePatchType, patch), opts...)
	}
	if dryRun(cmd) {
		if err := apply(client.DryRunAll); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "[dry-run] Would %s Skyhook %q (%s)\n", s.verb, name, edit)
		return nil
	}
	if !confirmed(cmd, yes, fmt.Sprintf("This will %s Skyhook %q (%s). Continue?", s.verb, name, edit)) {
		return nil
	}
	if err := apply(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Skyhook %q %s\n", name, s.done)
	return nil
}
