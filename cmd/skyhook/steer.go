package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// steering is a command that sets or clears one annotation of a rollout,
// under its kind's prefix (skyhook.nvidia.com/pause on a Skyhook,
// nodewright.nvidia.com/pause on a NodeWright).
type steering struct {
	use, short, verb, done string
	annotation             func(skyhookv1.RolloutKind) string
	set                    bool
}

var steerings = []steering{
	{"pause", "Stop new work on a NodeWright's or Skyhook's nodes (running stages finish)", "pause", "paused", skyhookv1.RolloutKind.PauseAnnotation, true},
	{"resume", "Let a paused NodeWright or Skyhook go on", "resume", "resumed", skyhookv1.RolloutKind.PauseAnnotation, false},
	{"disable", "Skip a NodeWright or Skyhook entirely (others are not held back by it)", "disable", "disabled", skyhookv1.RolloutKind.DisableAnnotation, true},
	{"enable", "Undo disable", "enable", "enabled", skyhookv1.RolloutKind.DisableAnnotation, false},
}

// newSteeringCommands are pause, resume, disable and enable. Each asks for
// confirmation unless -y, and --dry-run shows the change and has the API
// server check it without making it.
func newSteeringCommands() []*cobra.Command {
	var cmds []*cobra.Command
	for _, s := range steerings {
		var yes bool
		cmd := &cobra.Command{
			Use:   s.use + " <name>",
			Long:  "Acts on the NodeWright of that name, or else the Skyhook (a NodeWright and a Skyhook of one name are one rollout, led by the NodeWright).",
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
	sk, err := existingRollout(cmd.Context(), c, name)
	if err != nil {
		return err
	}
	kind, annotation := kindOf(sk), s.annotation(skyhookv1.KindOf(sk))
	value := any(nil)
	edit := fmt.Sprintf("remove the annotation %s", annotation)
	if s.set {
		value = "true"
		edit = fmt.Sprintf("set the annotation %s=true", annotation)
	}
	if (sk.Annotations[annotation] == "true") == s.set {
		fmt.Fprintf(cmd.OutOrStdout(), "%s %s: nothing to %s\n", kind, name, s.verb)
		return nil
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]any{annotation: value}}})
	if err != nil {
		return err
	}
	apply := func(opts ...client.PatchOption) error {
		return c.Patch(cmd.Context(), objectOf(sk), client.RawPatch(types.MergePatchType, patch), opts...)
	}
	if dryRun(cmd) {
		if err := apply(client.DryRunAll); err != nil {
			return err
		}
		fmt.Fprintf(cmd.OutOrStdout(), "[dry-run] Would %s %s %q (%s)\n", s.verb, kind, name, edit)
		return nil
	}
	if !confirmed(cmd, yes, fmt.Sprintf("This will %s %s %q (%s). Continue?", s.verb, kind, name, edit)) {
		return nil
	}
	if err := apply(); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "%s %q %s\n", kind, name, s.done)
	return nil
}
