package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// newPackageCommand groups what concerns one package: status, logs and
// rerun.
func newPackageCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "package", Short: "See, read the logs of and rerun a package on nodes"}
	cmd.AddCommand(packageStatusCommand(), newLogsCommand(), newRerunCommand())
	return cmd
}

// packageStatusEntry is a package's record on one node, as NodeWright's
// plugin prints it; SkyhookName and Kind are this project's.
type packageStatusEntry struct {
	skyhookv1.PackageStatus
	NodeName    string `json:"nodeName"`
	SkyhookName string `json:"skyhookName"`
	Kind        string `json:"kind"`
}

func packageStatusCommand() *cobra.Command {
	var named rolloutFlag
	var nodePatterns []string
	cmd := &cobra.Command{
		Use:   "status <package> [--nodewright NAME] [--node N]...",
		Short: "The package's record on every node (or on the nodes --node selects)",
		Long: `Prints, per NodeWright or Skyhook, its packages and a row per node with a
record of the package: version, stage and state; -o wide adds the restarts
and the image. Without --nodewright, every rollout with the package.
-o table|wide|json|yaml.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			skyhook, err := named.name()
			if err != nil {
				return err
			}
			c, nodes, err := clusterNodes(cmd)
			if err != nil {
				return err
			}
			skyhooks, err := rolloutsNamed(cmd, c, skyhook)
			if err != nil {
				return err
			}
			leaders := map[string]skyhookv1.RolloutKind{}
			for _, sk := range skyhooks {
				leaders[sk.Name] = skyhookv1.KindOf(sk)
			}
			targets := pointers(nodes)
			if len(nodePatterns) > 0 {
				if targets, err = selectNodes(nodes, nodePatterns); err != nil {
					return err
				}
			}
			all := []packageStatusEntry{}
			var blocks [][]packageStatusEntry
			for _, sk := range skyhooks {
				var block []packageStatusEntry
				for _, r := range readRecords(cmd, targets, sk.Name, leaders) {
					for _, p := range r.packages() {
						if p.Name == args[0] {
							block = append(block, packageStatusEntry{PackageStatus: p, NodeName: r.node.Name, SkyhookName: sk.Name, Kind: kindOf(sk)})
						}
					}
				}
				all = append(all, block...)
				blocks = append(blocks, block)
			}
			w := cmd.OutOrStdout()
			if done, err := printStructured(w, output, all); done {
				return err
			}
			if len(all) == 0 {
				if skyhook != "" {
					fmt.Fprintf(w, "No package status found for skyhook %q\n", skyhook)
				} else {
					fmt.Fprintf(w, "No package status found for package %q\n", args[0])
				}
				return nil
			}
			first := true
			for i, block := range blocks {
				if len(block) == 0 {
					continue
				}
				if !first {
					fmt.Fprintln(w)
				}
				first = false
				if err := printPackageStatus(w, skyhooks[i], block, output); err != nil {
					return err
				}
			}
			return nil
		},
	}
	addRolloutFlag(cmd, &named, "the NodeWright or Skyhook (without it, every rollout with the package)")
	cmd.Flags().StringArrayVar(&nodePatterns, "node", nil, "only this node, a name or a regular expression (repeatable)")
	return cmd
}

// rolloutsNamed is the named rollout, or every rollout (each name's
// leader), sorted by name.
func rolloutsNamed(cmd *cobra.Command, c client.Client, name string) ([]*skyhookv1.Skyhook, error) {
	if name == "" {
		return leadingRollouts(cmd.Context(), c)
	}
	sk, err := existingRollout(cmd.Context(), c, name)
	if err != nil {
		return nil, err
	}
	return []*skyhookv1.Skyhook{sk}, nil
}

func printPackageStatus(w io.Writer, sk *skyhookv1.Skyhook, entries []packageStatusEntry, output string) error {
	var pkgs []string
	for _, name := range slices.Sorted(maps.Keys(sk.Spec.Packages)) {
		pkgs = append(pkgs, name+":"+sk.Spec.Packages[name].Version)
	}
	fmt.Fprintf(w, "%s: %s\nPackages: %s\n\n", kindOf(sk), sk.Name, strings.Join(pkgs, ", "))
	headers := []string{"NODE", "PACKAGE", "VERSION", "STAGE", "STATE"}
	if output == "wide" {
		headers = append(headers, "RESTARTS", "IMAGE")
	}
	var rows [][]string
	for _, e := range entries {
		row := []string{e.NodeName, e.Name, e.Version, string(e.Stage), string(e.State)}
		if output == "wide" {
			row = append(row, strconv.Itoa(int(e.Restarts)), e.Image)
		}
		rows = append(rows, row)
	}
	return printColumns(w, headers, rows)
}
