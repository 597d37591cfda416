package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"
)

// The formats of -o. Tables are for people; json and yaml print the same
// rows as objects, for tools.
var (
	listFormats = []string{"table", "wide", "json", "yaml"}
	viewFormats = []string{"table", "json", "yaml"} // one object, no wider table
	planFormats = []string{"table", "json"}
)

// addOutputFlag registers -o/--output with the formats the command prints.
func addOutputFlag(cmd *cobra.Command, output *string, formats []string) {
	cmd.Flags().StringVarP(output, "output", "o", "table", strings.Join(formats, ", "))
}

// checkOutput names the flag and the formats when output is not one of them.
func checkOutput(output string, formats []string) error {
	if !slices.Contains(formats, output) {
		return fmt.Errorf("--output %q: want %s", output, strings.Join(formats, ", "))
	}
	return nil
}

// printStructured writes v as JSON or YAML and reports true; for a table
// format it writes nothing and reports false.
func printStructured(w io.Writer, output string, v any) (bool, error) {
	switch output {
	case "json":
		out, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintln(w, string(out))
		return true, err
	case "yaml":
		out, err := yaml.Marshal(v)
		if err != nil {
			return true, err
		}
		_, err = w.Write(out)
		return true, err
	}
	return false, nil
}

// printTable writes tab-separated lines (a header first) as aligned
// columns.
func printTable(w io.Writer, lines ...string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, l := range lines {
		fmt.Fprintln(tw, l)
	}
	return tw.Flush()
}
