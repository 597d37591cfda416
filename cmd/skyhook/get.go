package main

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	"github.com/spf13/cobra"
	apimeta "k8s.io/apimachinery/pkg/api/meta"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/rollouts"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// row is one object as `get` shows it, in the columns of `flux get`.
type row struct {
	Kind      string `json:"kind"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	Revision  string `json:"revision"`
	Suspended bool   `json:"suspended"`
	Ready     string `json:"ready"`
	Message   string `json:"message"`
	// Detail is what -o wide adds: a Skyhook's state and complete nodes,
	// a PackageSet's source.
	Detail string `json:"detail,omitempty"`
}

func newGetCommand() *cobra.Command {
	var all bool
	var selector string
	cmd := &cobra.Command{
		Use:   "get (skyhooks|nodewrights|packagesets|all)",
		Short: "List NodeWrights, Skyhooks and PackageSets the way flux get lists Flux objects",
		Long: `Columns: NAME (kind/name: skyhook/..., nodewright/..., packageset/...),
REVISION (a rollout's packages, a PackageSet's last applied revision),
SUSPENDED (paused or disabled; suspend), READY and MESSAGE (the Ready
condition). skyhooks lists the rollouts of both kinds, nodewrights the
NodeWrights only.`,
		Args:      cobra.ExactArgs(1),
		ValidArgs: []string{"skyhooks", "nodewrights", "packagesets", "all"},
		RunE: func(cmd *cobra.Command, args []string) error {
			output, err := checkOutput(cmd, listFormats)
			if err != nil {
				return err
			}
			want, err := parseStatusSelector(selector)
			if err != nil {
				return err
			}
			c, ns, err := kubeClient()
			if err != nil {
				return err
			}
			if all {
				ns = ""
			}
			rows, err := listRows(cmd, c, args[0], ns)
			if err != nil {
				return err
			}
			kept := []row{} // [] rather than null in JSON when nothing matches
			for _, r := range rows {
				if want == "" || strings.EqualFold(r.Ready, want) {
					kept = append(kept, r)
				}
			}
			return printRows(cmd.OutOrStdout(), kept, output, all)
		},
	}
	cmd.Flags().BoolVarP(&all, "all-namespaces", "A", false, "PackageSets of every namespace (Skyhooks are cluster-wide)")
	cmd.Flags().StringVar(&selector, "status-selector", "", "only objects whose Ready status is this, as ready=true|false|unknown")
	return cmd
}

func parseStatusSelector(s string) (string, error) {
	if s == "" {
		return "", nil
	}
	k, v, ok := strings.Cut(s, "=")
	if !ok || k != "ready" || (v != "true" && v != "false" && v != "unknown") {
		return "", fmt.Errorf("--status-selector %q: want ready=true, ready=false or ready=unknown", s)
	}
	return v, nil
}

func listRows(cmd *cobra.Command, c client.Client, kind, ns string) ([]row, error) {
	var rows []row
	for _, k := range rollouts.Kinds {
		if kind != "skyhooks" && kind != "all" && kind != k.Plural {
			continue
		}
		views, err := k.List(cmd.Context(), c)
		if apimeta.IsNoMatchError(err) { // a cluster without NodeWright's CRD has none
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, sk := range views {
			rows = append(rows, rolloutRow(sk))
		}
	}
	if kind == "packagesets" || kind == "all" {
		var list skyhookv1.PackageSetList
		if err := c.List(cmd.Context(), &list, client.InNamespace(ns)); err != nil {
			return nil, err
		}
		for i := range list.Items {
			ps := &list.Items[i]
			rows = append(rows, row{Kind: "PackageSet", Namespace: ps.Namespace, Name: ps.Name, Revision: ps.Status.LastAppliedRevision,
				Suspended: ps.Spec.Suspend, Ready: readyOf(ps), Message: conditions.GetMessage(ps, meta.ReadyCondition),
				Detail: ps.Spec.SourceRef.Kind + "/" + ps.Spec.SourceRef.Name + " " + ps.Spec.Path})
		}
	}
	if kind != "skyhooks" && kind != "nodewrights" && kind != "packagesets" && kind != "all" {
		return nil, fmt.Errorf("%q: want skyhooks, nodewrights, packagesets or all", kind)
	}
	// Rollouts first, by name, a Skyhook before its NodeWright twin; then
	// PackageSets.
	sort.SliceStable(rows, func(i, j int) bool {
		a, b := rows[i], rows[j]
		if (a.Kind == "PackageSet") != (b.Kind == "PackageSet") {
			return b.Kind == "PackageSet"
		}
		if a.Namespace+"/"+a.Name != b.Namespace+"/"+b.Name {
			return a.Namespace+"/"+a.Name < b.Namespace+"/"+b.Name
		}
		return a.Kind > b.Kind
	})
	return rows, nil
}

// rolloutRow is a Skyhook or a NodeWright (its view) as a row.
func rolloutRow(sk *skyhookv1.Skyhook) row {
	kind := skyhookv1.KindOf(sk)
	return row{Kind: kind.Kind, Name: sk.Name, Revision: sk.Status.PackageList,
		Suspended: sk.Annotations[kind.PauseAnnotation()] == "true" || sk.Annotations[kind.DisableAnnotation()] == "true",
		Ready:     readyOf(sk), Message: conditions.GetMessage(sk, meta.ReadyCondition),
		Detail: fmt.Sprintf("%s, %s complete", orDash(string(sk.Status.Status)), orDash(sk.Status.CompleteNodes))}
}

func printRows(w io.Writer, rows []row, output string, namespaces bool) error {
	if done, err := printStructured(w, output, rows); done {
		return err
	}
	header := "NAME\tREVISION\tSUSPENDED\tREADY\tMESSAGE"
	if namespaces {
		header = "NAMESPACE\t" + header
	}
	if output == "wide" {
		header += "\tDETAIL"
	}
	lines := []string{header}
	for _, r := range rows {
		name := strings.ToLower(r.Kind) + "/" + r.Name
		line := fmt.Sprintf("%s\t%s\t%t\t%s\t%s", name, r.Revision, r.Suspended, r.Ready, r.Message)
		if namespaces {
			line = r.Namespace + "\t" + line
		}
		if output == "wide" {
			line += "\t" + r.Detail
		}
		lines = append(lines, line)
	}
	return printTable(w, lines...)
}
