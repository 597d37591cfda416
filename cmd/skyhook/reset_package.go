package main

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// packageRef is what --package names: a package, and a version when given.
type packageRef struct{ name, version string }

// parsePackageRef reads <name> or <name>:<version>.
func parsePackageRef(s string) (packageRef, error) {
	name, version, hasVersion := strings.Cut(s, ":")
	switch {
	case name == "":
		return packageRef{}, errors.New("--package: the package name must not be empty (<name> or <name>:<version>)")
	case hasVersion && version == "":
		return packageRef{}, fmt.Errorf("--package %q: the version after ':' must not be empty (<name> or <name>:<version>)", s)
	}
	return packageRef{name: name, version: version}, nil
}

// matches reports whether the entry is of the package (and version).
func (p packageRef) matches(e skyhookv1.PackageStatus) bool {
	return e.Name == p.name && (p.version == "" || e.Version == p.version)
}

func (p packageRef) String() string {
	if p.version == "" {
		return p.name
	}
	return p.name + ":" + p.version
}

// packageReset is one node's record without the package's entries.
type packageReset struct {
	record    nodeRecord
	remaining skyhookv1.NodeState
}

// resetPackage forgets one package's entries in the rollout's records, as
// NodeWright's `reset --package`: the rest of each record stays, the
// annotation goes when nothing is left, and the batches are never reset
// (rerunning one package is no reason to start a rollout over).
func resetPackage(cmd *cobra.Command, name, filter string, yes bool) error {
	ref, err := parsePackageRef(filter)
	if err != nil {
		return err
	}
	c, nodes, err := clusterNodes(cmd)
	if err != nil {
		return err
	}
	sk, err := existingRollout(cmd.Context(), c, name)
	if err != nil {
		return err
	}
	records := readRecords(cmd, pointers(nodes), name, map[string]skyhookv1.RolloutKind{name: skyhookv1.KindOf(sk)})
	resets, others := planPackageResets(records, ref)
	out := cmd.OutOrStdout()
	fmt.Fprintf(out, "%s: %s\nPackage filter: %s\n", kindOf(sk), name, ref)
	printOtherVersions(cmd, others, ref)
	if len(resets) == 0 {
		fmt.Fprintln(out, "no matching package on any node")
		return nil
	}
	fmt.Fprintf(out, "Nodes with a matching package (%d):\n", len(resets))
	for _, r := range resets {
		fmt.Fprintf(out, "  - %s\n", r.record.node.Name)
	}
	if !dryRun(cmd) && !confirmed(cmd, yes, fmt.Sprintf("\nThis will remove the %q entry from %d node(s).\nContinue?", ref.String(), len(resets))) {
		return nil
	}
	var failed []string
	for _, r := range resets {
		if err := writeState(cmd, c, r.record.node, r.record.ref.NodeStateAnnotation(), r.remaining); err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", r.record.node.Name, err))
		}
	}
	changed := len(resets) - len(failed)
	return reportNodeChanges(cmd, failed, fmt.Sprintf("Successfully updated %d node(s)", changed), changed)
}

// planPackageResets are the records with entries of the package, without
// them; others are the records with the package at another version only.
func planPackageResets(records []nodeRecord, ref packageRef) (resets []packageReset, others []nodeRecord) {
	for _, r := range records {
		remaining := maps.Clone(r.state)
		maps.DeleteFunc(remaining, func(_ string, e skyhookv1.PackageStatus) bool { return ref.matches(e) })
		switch {
		case len(remaining) < len(r.state):
			resets = append(resets, packageReset{record: r, remaining: remaining})
		case slices.ContainsFunc(r.packages(), func(e skyhookv1.PackageStatus) bool { return e.Name == ref.name }):
			others = append(others, r)
		}
	}
	return resets, others
}

// printOtherVersions says which nodes keep the package at another version
// than the one named.
func printOtherVersions(cmd *cobra.Command, others []nodeRecord, ref packageRef) {
	if len(others) == 0 {
		return
	}
	fmt.Fprintf(cmd.OutOrStdout(), "Left as they are, with %s at another version (%d):\n", ref.name, len(others))
	for _, r := range others {
		var versions []string
		for _, e := range r.packages() {
			if e.Name == ref.name {
				versions = append(versions, e.Version)
			}
		}
		fmt.Fprintf(cmd.OutOrStdout(), "  - %s (%s)\n", r.node.Name, strings.Join(versions, ", "))
	}
}
