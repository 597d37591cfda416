// Package layout checks the shape of the repository that docs promise and
// reviews would otherwise have to re-measure by hand: no import loop between
// the top-level folders, no binary linking the testing package, the
// reconciler's functions and root files kept small, imports grouped.
package layout

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/test/testenv"
)

const module = "github.com/skyhook-go/skyhook"

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

func goList(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = repoRoot(t)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v", args, err)
	}
	return string(out)
}

// The top-level folders import each other in one direction only (tests
// left aside): cmd may use everything, the rest share through api.
func TestTopLevelFoldersImportNoLoop(t *testing.T) {
	imports := map[string]map[string]bool{}
	scanner := bufio.NewScanner(strings.NewReader(goList(t, "-f", "{{.ImportPath}} {{join .Imports \" \"}}", "./...")))
	for scanner.Scan() {
		fields := strings.Fields(scanner.Text())
		from := topFolder(fields[0])
		for _, imp := range fields[1:] {
			if to := topFolder(imp); to != "" && to != from {
				if imports[from] == nil {
					imports[from] = map[string]bool{}
				}
				imports[from][to] = true
			}
		}
	}
	if loop := findLoop(imports); loop != nil {
		t.Fatalf("the top-level folders import each other in a loop: %s", strings.Join(loop, " -> "))
	}
}

func topFolder(importPath string) string {
	rest, ok := strings.CutPrefix(importPath, module+"/")
	if !ok {
		return ""
	}
	folder, _, _ := strings.Cut(rest, "/")
	return folder
}

// findLoop returns a cycle in the graph, nil when there is none.
func findLoop(graph map[string]map[string]bool) []string {
	const (
		visiting = 1
		done     = 2
	)
	mark := map[string]int{}
	var path []string
	var visit func(string) []string
	visit = func(n string) []string {
		mark[n] = visiting
		path = append(path, n)
		for to := range graph[n] {
			switch mark[to] {
			case visiting:
				return append(path[slices.Index(path, to):], to)
			case 0:
				if loop := visit(to); loop != nil {
					return loop
				}
			}
		}
		path = path[:len(path)-1]
		mark[n] = done
		return nil
	}
	for n := range graph {
		if mark[n] == 0 {
			if loop := visit(n); loop != nil {
				return loop
			}
		}
	}
	return nil
}

func TestFindLoop(t *testing.T) {
	acyclic := map[string]map[string]bool{"cmd": {"api": true, "reconcile": true}, "reconcile": {"api": true}}
	if loop := findLoop(acyclic); loop != nil {
		t.Fatalf("a loop in an acyclic graph: %v", loop)
	}
	cyclic := map[string]map[string]bool{"webhook": {"reconcile": true}, "reconcile": {"webhook": true}}
	if loop := findLoop(cyclic); len(loop) != 3 || loop[0] != loop[2] {
		t.Fatalf("loop %v, want webhook and reconcile in a circle", loop)
	}
}

// What ships does not link the testing package (its flags and code would
// end up in every binary): no package a binary links imports it, with one
// exception named here. github.com/digitorus/pkcs7 (under sigstore-go's
// trusted roots, for timestamp authorities) has a test misnamed
// verify_test_dsa.go whose build tags hold on every Go; its version that
// renamed it needs Go 1.27. Any other importer fails this test.
func TestBinariesDoNotLinkTesting(t *testing.T) {
	allowed := map[string]bool{"github.com/digitorus/pkcs7": true}
	out := goList(t, "-deps", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./cmd/...")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 || allowed[fields[0]] {
			continue
		}
		for _, imp := range fields[1:] {
			if imp == "testing" {
				t.Errorf("%s, linked by a binary under cmd/, imports the testing package", fields[0])
			}
		}
	}
}

// goFiles are the repository's Go files under dir, generated ones left out.
func goFiles(t *testing.T, dir string, tests bool) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(filepath.Join(repoRoot(t), dir), func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && strings.HasPrefix(d.Name(), ".") && path != repoRoot(t) {
			return filepath.SkipDir
		}
		name := d.Name()
		if d.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "zz_generated") ||
			(!tests && strings.HasSuffix(name, "_test.go")) {
			return nil
		}
		files = append(files, path)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// No function takes more than five parameters: a group of values that
// travels together is a type (nodePass, rolloutPass, stagepod.Spec). Tests
// are left out: a fuzz target takes one parameter per input it varies.
func TestFunctionsTakeAtMostFiveParameters(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range goFiles(t, ".", false) {
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			var ft *ast.FuncType
			switch fn := n.(type) {
			case *ast.FuncDecl:
				ft = fn.Type
			case *ast.FuncLit:
				ft = fn.Type
			default:
				return true
			}
			if count := parameters(ft); count > 5 {
				t.Errorf("%s: a function takes %d parameters", fset.Position(ft.Pos()), count)
			}
			return true
		})
	}
}

func parameters(ft *ast.FuncType) int {
	count := 0
	for _, field := range ft.Params.List {
		count += max(1, len(field.Names))
	}
	return count
}

// The reconciler's root files are one concept each and stay readable.
func TestReconcileRootFilesStayShort(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "reconcile", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		if strings.HasSuffix(path, "_test.go") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if lines := bytes.Count(data, []byte("\n")); lines > 400 {
			t.Errorf("%s has %d lines; split it by concept (reconcile/doc.go has the file map)", filepath.Base(path), lines)
		}
	}
}

// reconcile/doc.go maps the root package's files, one concept each: every
// file is in the map, and every file the map names exists.
func TestReconcileFileMapNamesEveryFile(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(repoRoot(t), "reconcile", "doc.go"))
	if err != nil {
		t.Fatal(err)
	}
	mapped := fileMap(string(doc))
	files, err := filepath.Glob(filepath.Join(repoRoot(t), "reconcile", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	for _, path := range files {
		name := filepath.Base(path)
		if strings.HasSuffix(name, "_test.go") || name == "doc.go" {
			continue
		}
		if !mapped[name] {
			t.Errorf("reconcile/%s is not in the file map of reconcile/doc.go", name)
		}
		delete(mapped, name)
	}
	for name := range mapped {
		t.Errorf("the file map of reconcile/doc.go names %s, which is not a file of the package", name)
	}
}

// fileMap are the file names a doc comment's map lists: the first word of
// an indented line that ends in .go.
func fileMap(doc string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(doc, "\n") {
		fields := strings.Fields(strings.TrimPrefix(line, "//"))
		if strings.HasPrefix(line, "//\t") && len(fields) > 0 && strings.HasSuffix(fields[0], ".go") {
			out[fields[0]] = true
		}
	}
	return out
}

func TestFileMap(t *testing.T) {
	got := fileMap("// The files:\n//\n//\trollout.go  one pass\n//\t            over rollout.go's nodes\n//\tgather.go   reads\n// see node.go\n")
	if len(got) != 2 || !got["rollout.go"] || !got["gather.go"] {
		t.Fatalf("fileMap = %v, want rollout.go and gather.go", got)
	}
}

// The status leaf decides what the status says from what a pass found: it
// stands on the API types alone, so its tests need no cluster.
func TestReportImportsOnlyTheAPI(t *testing.T) {
	for _, imp := range strings.Fields(goList(t, "-f", "{{join .Imports \" \"}}", "./reconcile/report")) {
		if topFolder(imp) != "" && topFolder(imp) != "api" {
			t.Errorf("reconcile/report imports %s; it may import only this module's api", imp)
		}
	}
}

// Imports come in groups separated by a blank line, in this order: the
// standard library, other modules, this module.
func TestImportsAreGrouped(t *testing.T) {
	fset := token.NewFileSet()
	for _, path := range goFiles(t, ".", true) {
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if problem := groupingProblem(fset, f.Imports); problem != "" {
			rel, _ := filepath.Rel(repoRoot(t), path)
			t.Errorf("%s: %s", rel, problem)
		}
	}
}

// groupingProblem says what is wrong with the grouping of the imports, or
// is empty.
func groupingProblem(fset *token.FileSet, imports []*ast.ImportSpec) string {
	lastLine, lastClass := 0, -1
	for _, spec := range imports {
		path := strings.Trim(spec.Path.Value, `"`)
		class := importClass(path)
		line := fset.Position(spec.Pos()).Line
		newGroup := lastLine != 0 && line > lastLine+1
		switch {
		case lastClass == -1:
		case class == lastClass && newGroup:
			return fmt.Sprintf("%s starts a second group of %s imports", path, classNames[class])
		case class != lastClass && !newGroup:
			return fmt.Sprintf("%s (%s) is in a group of %s imports", path, classNames[class], classNames[lastClass])
		case class < lastClass:
			return fmt.Sprintf("%s (%s) comes after %s imports", path, classNames[class], classNames[lastClass])
		}
		lastLine, lastClass = fset.Position(spec.End()).Line, class
	}
	return ""
}

var classNames = []string{"standard library", "third-party", "own"}

func importClass(path string) int {
	switch {
	case path == module || strings.HasPrefix(path, module+"/"):
		return 2
	case strings.Contains(strings.Split(path, "/")[0], "."):
		return 1
	}
	return 0
}

func TestGroupingProblem(t *testing.T) {
	for src, want := range map[string]string{
		"import (\n\t\"fmt\"\n\n\t\"k8s.io/api/core/v1\"\n\n\t\"" + module + "/api\"\n)\n": "",
		"import (\n\t\"fmt\"\n\t\"k8s.io/api/core/v1\"\n)\n":                               "is in a group of standard library imports",
		"import (\n\t\"k8s.io/api/core/v1\"\n\n\t\"fmt\"\n)\n":                             "comes after third-party imports",
		"import (\n\t\"fmt\"\n\n\t\"os\"\n)\n":                                             "starts a second group",
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", "package x\n"+src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		if got := groupingProblem(fset, f.Imports); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("%q: %q, want %q", src, got, want)
		}
	}
}
