package main

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"sigs.k8s.io/yaml"
)

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

// printColumns writes a table as NodeWright's plugin prints its tables: the
// headers, a line of dashes under each, then the rows, aligned.
func printColumns(w io.Writer, headers []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	dashes := make([]string, len(headers))
	for i, h := range headers {
		dashes[i] = strings.Repeat("-", len(h))
	}
	for _, r := range append([][]string{headers, dashes}, rows...) {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	return tw.Flush()
}

// readyOf is an object's Ready condition status, or "Unknown".
func readyOf(o conditions.Getter) string {
	switch {
	case !conditions.Has(o, meta.ReadyCondition):
		return "Unknown"
	case conditions.IsTrue(o, meta.ReadyCondition):
		return "True"
	case conditions.IsFalse(o, meta.ReadyCondition):
		return "False"
	}
	return "Unknown"
}

// orDash is s, or "-" for nothing.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
