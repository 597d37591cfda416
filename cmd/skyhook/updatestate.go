package main

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// updateStateRequest is what update-state is asked: the entry
// <package>|<version> of the rollout's record set to stage and state.
type updateStateRequest struct {
	name, pkg, version string
	stage              skyhookv1.Stage
	state              skyhookv1.State
	nodes              []string // --node patterns
	selector           string   // -l
	add, yes           bool
}

// updateStates are the states update-state takes.
var updateStates = []skyhookv1.State{skyhookv1.StateComplete, skyhookv1.StateInProgress, skyhookv1.StateSkipped,
	skyhookv1.StateErroring, skyhookv1.StateUnknown}

// updateStages are the stages update-state takes: every stage a record
// can hold.
var updateStages = []skyhookv1.Stage{skyhookv1.StageApply, skyhookv1.StageConfig, skyhookv1.StageUpgrade, skyhookv1.StageInterrupt,
	skyhookv1.StagePostInterrupt, skyhookv1.StageUninstall, skyhookv1.StageUninstallInterrupt}

// newUpdateStateCommand edits one package's entry in a rollout's records,
// NodeWright's escape hatch for a stuck rollout.
func newUpdateStateCommand() *cobra.Command {
	var req updateStateRequest
	cmd := &cobra.Command{
		Use:   "update-state <name> <package> <version> <stage> <state>",
		Short: "Set one package's recorded stage and state on nodes (an escape hatch: pause the rollout first)",
		Long: `Sets the entry <package>|<version> in the record of the NodeWright (or else the
Skyhook) of that name to the stage and state given, on the nodes whose record
has that entry (those --node and -l/--selector select, when given). With
--add it creates the entry on the selected nodes that lack it instead (a node
without a record gets one); --add needs --node or --selector. The package
and version must be in the rollout's spec. Stages: ` + joinStages(updateStages) + `.
States: ` + joinStates(updateStates) + `.

Nothing checks that the operator could reach that stage and state: pause the
rollout first, or the operator may act on the change at once. A record that
changed since it was read is not overwritten (the node is reported).`,
		Args: cobra.ExactArgs(5),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := req.parse(args); err != nil {
				return err
			}
			return updateState(cmd, req)
		},
	}
	cmd.Flags().StringArrayVar(&req.nodes, "node", nil, "only this node, a name or a regular expression (repeatable)")
	cmd.Flags().StringVarP(&req.selector, "selector", "l", "", "only the nodes with these labels (a label selector, as kubectl's -l)")
	cmd.Flags().BoolVar(&req.add, "add", false, "create the entry on the selected nodes that lack it (needs --node or --selector)")
	addConfirmFlags(cmd, &req.yes)
	return cmd
}

// parse checks the arguments and flags that need no cluster.
func (r *updateStateRequest) parse(args []string) error {
	r.name, r.pkg, r.version = args[0], args[1], args[2]
	r.stage, r.state = skyhookv1.Stage(args[3]), skyhookv1.State(args[4])
	if !slices.Contains(updateStages, r.stage) {
		return fmt.Errorf("invalid stage %q: must be one of %s", args[3], joinStages(updateStages))
	}
	if !slices.Contains(updateStates, r.state) {
		return fmt.Errorf("invalid state %q: must be one of %s", args[4], joinStates(updateStates))
	}
	if r.add && len(r.nodes) == 0 && r.selector == "" {
		return fmt.Errorf("--add needs --node or --selector: it creates records, so it must be told on which nodes")
	}
	if _, err := labels.Parse(r.selector); err != nil {
		return fmt.Errorf("--selector %q: %w", r.selector, err)
	}
	return nil
}

func joinStages(stages []skyhookv1.Stage) string {
	out := make([]string, len(stages))
	for i, s := range stages {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

func joinStates(states []skyhookv1.State) string {
	out := make([]string, len(states))
	for i, s := range states {
		out[i] = string(s)
	}
	return strings.Join(out, ", ")
}

// stateUpdate is one node's record with the entry set.
type stateUpdate struct {
	node *corev1.Node
	key  string // the record's annotation key
	was  *skyhookv1.PackageStatus
	next skyhookv1.NodeState
}

func updateState(cmd *cobra.Command, req updateStateRequest) error {
	c, _, err := kubeClient()
	if err != nil {
		return err
	}
	sk, err := existingRollout(cmd.Context(), c, req.name)
	if err != nil {
		return err
	}
	entry, err := specEntry(sk, req)
	if err != nil {
		return err
	}
	nodes, err := updateTargets(cmd, c, req)
	if err != nil || len(nodes) == 0 {
		return err
	}
	updates := planStateUpdates(cmd, nodes, sk, req, entry)
	if len(updates) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), "No nodes to update")
		return nil
	}
	printStateUpdates(cmd, sk, req, updates)
	question := fmt.Sprintf("\nThis will set package %q (version %s) to stage %s, state %s on %d node(s).\nContinue?", req.pkg, req.version, req.stage, req.state, len(updates))
	if !dryRun(cmd) && !confirmed(cmd, req.yes, question) {
		return nil
	}
	var failed []string
	for _, u := range updates {
		if err := writeState(cmd, c, u.node, u.key, u.next); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", u.node.Name, err))
		}
	}
	changed := len(updates) - len(failed)
	return reportNodeChanges(cmd, failed, fmt.Sprintf("Successfully updated %d node(s)", changed), changed)
}

// specEntry is the entry the package and version would have, checked
// against the rollout's spec: update-state edits only what the rollout
// declares (reset --package forgets entries it no longer does).
func specEntry(sk *skyhookv1.Skyhook, req updateStateRequest) (skyhookv1.PackageStatus, error) {
	pkg, ok := sk.Spec.Packages[req.pkg]
	if !ok || pkg.Version != req.version {
		var declared []string
		for _, name := range slices.Sorted(maps.Keys(sk.Spec.Packages)) {
			declared = append(declared, name+":"+sk.Spec.Packages[name].Version)
		}
		return skyhookv1.PackageStatus{}, fmt.Errorf("package %q version %q not found in spec of %s %q (it declares %s)",
			req.pkg, req.version, kindOf(sk), sk.Name, orDash(strings.Join(declared, ", ")))
	}
	return skyhookv1.PackageStatus{Name: req.pkg, Version: req.version, Image: pkg.Image, ContainerSHA: pkg.ContainerSHA,
		Stage: req.stage, State: req.state}, nil
}

// updateTargets are the nodes -l and --node select (every node without
// them), sorted by name; a --node pattern that selects none is a warning.
func updateTargets(cmd *cobra.Command, c client.Client, req updateStateRequest) ([]*corev1.Node, error) {
	sel, _ := labels.Parse(req.selector) // parse checked it
	var list corev1.NodeList
	if err := c.List(cmd.Context(), &list, client.MatchingLabelsSelector{Selector: sel}); err != nil {
		return nil, err
	}
	if len(req.nodes) == 0 {
		return pointers(list.Items), nil
	}
	for _, p := range req.nodes {
		matched, err := matchNodes([]string{p}, nodeNames(list.Items))
		if err != nil {
			return nil, err
		}
		if len(matched) == 0 {
			fmt.Fprintf(cmd.ErrOrStderr(), "Warning: --node %s: no such node%s, skipped\n", p, map[bool]string{true: " matching --selector"}[req.selector != ""])
		}
	}
	targets, err := selectNodes(list.Items, req.nodes)
	if err == nil && len(targets) == 0 {
		fmt.Fprintln(cmd.OutOrStdout(), noNodesMatched)
	}
	return targets, err
}

// planStateUpdates are the nodes' records with the entry set (see
// stateUpdateOn). A node left out is said on stderr when it was asked for
// by name or label (with -v otherwise).
func planStateUpdates(cmd *cobra.Command, nodes []*corev1.Node, sk *skyhookv1.Skyhook, req updateStateRequest, entry skyhookv1.PackageStatus) []stateUpdate {
	var out []stateUpdate
	for _, n := range nodes {
		u, skipped := stateUpdateOn(n, sk, req, entry)
		switch {
		case skipped == "":
			out = append(out, u)
		case len(req.nodes) > 0 || req.selector != "":
			fmt.Fprintf(cmd.ErrOrStderr(), "Warning: node %q %s\n", n.Name, skipped)
		default:
			warnf(cmd, "node %q %s", n.Name, skipped)
		}
	}
	return out
}

// stateUpdateOn is the node's record with the entry set: replaced where
// the record has it, or with --add created where it does not (and the
// record with it, under the leader's kind's key); or why the node is
// skipped.
func stateUpdateOn(n *corev1.Node, sk *skyhookv1.Skyhook, req updateStateRequest, entry skyhookv1.PackageStatus) (stateUpdate, string) {
	kind, recorded := recordKindOn(n, sk.Name, map[string]skyhookv1.RolloutKind{sk.Name: skyhookv1.KindOf(sk)})
	if !recorded && !req.add {
		return stateUpdate{}, fmt.Sprintf("has no record of %s %q, skipped (--add creates one)", kindOf(sk), sk.Name)
	}
	if !recorded {
		kind = skyhookv1.KindOf(sk)
	}
	annotation := kind.Named(sk.Name).NodeStateAnnotation()
	state, err := decodeState(n.Annotations[annotation])
	if err != nil {
		return stateUpdate{}, fmt.Sprintf("has a record that cannot be read, skipped: %v", err)
	}
	key := skyhookv1.NodeStateKey(req.pkg, req.version)
	current, has := state[key]
	switch {
	case has && req.add:
		return stateUpdate{}, fmt.Sprintf("already has %s, skipped (without --add it is updated)", key)
	case !has && !req.add:
		return stateUpdate{}, fmt.Sprintf("has no entry %s, skipped (--add creates it)", key)
	}
	u := stateUpdate{node: n, key: annotation, next: maps.Clone(state)}
	if u.next == nil {
		u.next = skyhookv1.NodeState{}
	}
	u.next[key] = entry
	if has {
		was := current
		u.was = &was
		current.Stage, current.State = req.stage, req.state // the rest (image, restarts) as recorded
		u.next[key] = current
	}
	return u, ""
}

func printStateUpdates(cmd *cobra.Command, sk *skyhookv1.Skyhook, req updateStateRequest, updates []stateUpdate) {
	out := cmd.OutOrStdout()
	kind := skyhookv1.KindOf(sk)
	if sk.Annotations[kind.PauseAnnotation()] != "true" {
		fmt.Fprintf(cmd.ErrOrStderr(), "Warning: %s %q is not paused: the operator may act on the change, or overwrite it, at once (pause it first)\n", kindOf(sk), sk.Name)
	}
	fmt.Fprintf(out, "%s: %s\nPackage: %s (version %s)\nSet to: stage %s, state %s\nNodes to update (%d):\n",
		kindOf(sk), sk.Name, req.pkg, req.version, req.stage, req.state, len(updates))
	for _, u := range updates {
		if u.was == nil {
			fmt.Fprintf(out, "  - %s (new entry)\n", u.node.Name)
			continue
		}
		fmt.Fprintf(out, "  - %s (now stage %s, state %s)\n", u.node.Name, u.was.Stage, u.was.State)
	}
}
