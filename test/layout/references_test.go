package layout

import (
	"fmt"
	"go/ast"
	"go/types"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/go/packages"
)

// A file of the reconciler's root package uses another when it names
// something that file declares: a function, type, variable or constant, a
// method, or a field of a type declared there. References that go both
// ways (a file using one that also uses it) are what keeps the root package
// from reading top to bottom; this many are left, and no more may come.
const maxBothWaysReferences = 4

func TestReconcileRootFilesReferenceMostlyOneWay(t *testing.T) {
	edges := fileReferences(t, module+"/reconcile")
	both := bothWays(edges)
	t.Logf("%d file-to-file references in reconcile/, %d of them both ways", len(edges), len(both))
	for _, e := range both {
		t.Logf("  %s -> %s", e[0], e[1])
	}
	if len(both) > maxBothWaysReferences {
		t.Errorf("%d references between the root files of reconcile/ go both ways, at most %d may: move what both files use into one of them or a leaf package",
			len(both), maxBothWaysReferences)
	}
}

// fileReferences are the pairs (from, to) of non-test files of the package
// where from names something to declares.
func fileReferences(t *testing.T, pkgPath string) map[[2]string]bool {
	t.Helper()
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes | packages.NeedTypesInfo,
		Dir: repoRoot(t)}
	pkgs, err := packages.Load(cfg, pkgPath)
	if err != nil {
		t.Fatal(err)
	}
	if len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
		t.Fatalf("loading %s: %v", pkgPath, pkgs[0].Errors)
	}
	pkg := pkgs[0]
	edges := map[[2]string]bool{}
	for _, file := range pkg.Syntax {
		from := filepath.Base(pkg.Fset.Position(file.Pos()).Filename)
		ast.Inspect(file, func(n ast.Node) bool {
			id, ok := n.(*ast.Ident)
			if !ok {
				return true
			}
			if to := declaringFile(pkg, pkg.TypesInfo.Uses[id]); to != "" && to != from {
				edges[[2]string{from, to}] = true
			}
			return true
		})
	}
	return edges
}

// declaringFile names the file of the package that declares obj, when obj
// is one of the package's own declarations a file can name from another:
// package-level, a method, or a field.
func declaringFile(pkg *packages.Package, obj types.Object) string {
	if obj == nil || obj.Pkg() != pkg.Types || !obj.Pos().IsValid() {
		return ""
	}
	switch o := obj.(type) {
	case *types.Var:
		if !o.IsField() && o.Parent() != pkg.Types.Scope() {
			return ""
		}
	case *types.Func:
	case *types.TypeName, *types.Const:
		if o.Parent() != pkg.Types.Scope() {
			return ""
		}
	default:
		return ""
	}
	return filepath.Base(pkg.Fset.Position(obj.Pos()).Filename)
}

// bothWays are the references whose reverse is a reference too, sorted.
func bothWays(edges map[[2]string]bool) [][2]string {
	var out [][2]string
	for e := range edges {
		if edges[[2]string{e[1], e[0]}] {
			out = append(out, e)
		}
	}
	sort.Slice(out, func(i, j int) bool { return slices.Compare(out[i][:], out[j][:]) < 0 })
	return out
}

func TestBothWays(t *testing.T) {
	edges := map[[2]string]bool{{"a.go", "b.go"}: true, {"b.go", "a.go"}: true, {"a.go", "c.go"}: true}
	if got := fmt.Sprint(bothWays(edges)); got != "[[a.go b.go] [b.go a.go]]" {
		t.Fatalf("bothWays = %s", got)
	}
}

// The CLI fans out from its root: main.go adds one command group per file
// (a file declaring a new...Command constructor that main.go calls; its
// subcommands may sit in files named after it, node_reset.go beside
// node.go), and the groups share only helper files beneath them. No group
// borrows from another, and no helper from a group, so the files a command
// needs are its group's and the helpers.
func TestCLICommandGroupsShareOnlyHelpers(t *testing.T) {
	edges := fileReferences(t, module+"/cmd/skyhook")
	groups := map[string]bool{}
	for e := range edges {
		if e[0] == "main.go" && declaresCommand(t, e[1]) {
			groups[strings.TrimSuffix(e[1], ".go")] = true
		}
	}
	if len(groups) < 10 {
		t.Fatalf("found %d command groups (%v); the test no longer finds them", len(groups), groups)
	}
	groupOf := func(file string) string {
		name := strings.TrimSuffix(file, ".go")
		if groups[name] {
			return name
		}
		if prefix, _, ok := strings.Cut(name, "_"); ok && groups[prefix] {
			return prefix
		}
		return ""
	}
	for e := range edges {
		from, to := e[0], e[1]
		if from == "main.go" || groupOf(to) == "" || groupOf(from) == groupOf(to) {
			continue
		}
		if groupOf(from) == "" {
			t.Errorf("helper %s uses command group %s", from, to)
		} else {
			t.Errorf("command group %s uses command group %s: move what both use into a helper file", from, to)
		}
	}
	t.Logf("%d command groups, the longest chain of files from main.go is %d deep", len(groups), depth(edges, "main.go"))
}

// declaresCommand reports whether the CLI file declares a cobra command
// constructor (new...Command or new...Commands).
func declaresCommand(t *testing.T, file string) bool {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(repoRoot(t), "cmd", "skyhook", file))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if name, ok := strings.CutPrefix(line, "func new"); ok && strings.Contains(name, "Command") {
			return true
		}
	}
	return false
}

// depth is the longest path of references from a file, not counting a
// reference back to a file already on the path (a loop).
func depth(edges map[[2]string]bool, from string) int {
	onPath := map[string]bool{}
	var walk func(string) int
	walk = func(file string) int {
		onPath[file] = true
		defer delete(onPath, file)
		longest := 0
		for e := range edges {
			if e[0] == file && !onPath[e[1]] {
				longest = max(longest, walk(e[1]))
			}
		}
		return longest + 1
	}
	return walk(from)
}

func TestDepthStopsAtLoops(t *testing.T) {
	edges := map[[2]string]bool{{"main.go", "get.go"}: true, {"get.go", "status.go"}: true, {"status.go", "get.go"}: true, {"status.go", "output.go"}: true}
	if d := depth(edges, "main.go"); d != 4 {
		t.Fatalf("depth = %d, want 4 (main, get, status, output)", d)
	}
}
