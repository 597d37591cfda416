// Package manifests reads the rollout manifests of a directory (a
// PackageSet's path in a source artifact): Skyhooks and DeploymentPolicies
// of skyhook.nvidia.com, NodeWrights and DeploymentPolicies of
// nodewright.nvidia.com. Anything else in a YAML file there is an error
// that names the file and the kind, so a set never applies objects it was
// not meant to carry.
package manifests

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Object is a manifest and the file it came from.
type Object struct {
	File   string // relative to the directory read
	Object *unstructured.Unstructured
}

// Name is "Kind/name" for messages, "Kind.group/name" for a kind of
// NodeWright's group (two groups have a DeploymentPolicy).
func (o Object) Name() string {
	if group := o.Object.GroupVersionKind().Group; group != skyhookv1.GroupVersion.Group {
		return o.Object.GetKind() + "." + group + "/" + o.Object.GetName()
	}
	return o.Object.GetKind() + "/" + o.Object.GetName()
}

// allowed are the kinds a PackageSet applies, by group and version.
var allowed = map[schema.GroupVersion][]string{
	skyhookv1.GroupVersion:               {skyhookv1.SkyhookKind, skyhookv1.DeploymentPolicyKind},
	skyhookv1.NodeWrights.GroupVersion(): {skyhookv1.NodeWrights.Kind, skyhookv1.DeploymentPolicyKind},
}

// allowedList says which kinds a PackageSet applies, for messages.
const allowedList = "Skyhook and DeploymentPolicy of skyhook.nvidia.com/v1alpha1, NodeWright and DeploymentPolicy of nodewright.nvidia.com/v1alpha1"

// Load reads every .yaml, .yml and .json file under dir, in name order,
// and returns the objects, or every problem found (file, document, why).
func Load(dir string) ([]Object, []string) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		switch strings.ToLower(filepath.Ext(path)) {
		case ".yaml", ".yml", ".json":
			if !d.IsDir() {
				files = append(files, path)
			}
		}
		return nil
	})
	if err != nil {
		return nil, []string{fmt.Sprintf("reading %s: %v", dir, err)}
	}
	sort.Strings(files)
	var objects []Object
	var problems []string
	seen := map[string]string{}
	for _, path := range files {
		rel, _ := filepath.Rel(dir, path)
		objs, ps := loadFile(path, rel)
		problems = append(problems, ps...)
		for _, o := range objs {
			key := o.Name()
			if first, dup := seen[key]; dup {
				problems = append(problems, fmt.Sprintf("%s: %s is also in %s", rel, key, first))
				continue
			}
			seen[key] = rel
			objects = append(objects, o)
		}
	}
	if len(objects) == 0 && len(problems) == 0 {
		problems = append(problems, fmt.Sprintf("no Skyhook, NodeWright or DeploymentPolicy manifests under %s", filepath.Base(dir)))
	}
	return objects, problems
}

// loadFile reads the YAML documents of one file.
func loadFile(path, rel string) ([]Object, []string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, []string{fmt.Sprintf("%s: %v", rel, err)}
	}
	reader := utilyaml.NewYAMLReader(bufio.NewReader(bytes.NewReader(data)))
	var objects []Object
	var problems []string
	for doc := 1; ; doc++ {
		raw, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return objects, append(problems, fmt.Sprintf("%s: document %d: %v", rel, doc, err))
		}
		if len(bytes.TrimSpace(raw)) == 0 || isComment(raw) {
			continue
		}
		u := &unstructured.Unstructured{}
		if err := utilyaml.Unmarshal(raw, &u.Object); err != nil {
			problems = append(problems, fmt.Sprintf("%s: document %d: not YAML: %v", rel, doc, err))
			continue
		}
		if len(u.Object) == 0 {
			continue
		}
		gvk := u.GroupVersionKind()
		kinds, known := allowed[gvk.GroupVersion()]
		switch {
		case !known:
			problems = append(problems, fmt.Sprintf("%s: document %d: %s %q (%s) is not allowed: a PackageSet applies only %s",
				rel, doc, orUnset(u.GetKind()), u.GetName(), orUnset(u.GetAPIVersion()), allowedList))
		case !slices.Contains(kinds, gvk.Kind):
			problems = append(problems, fmt.Sprintf("%s: document %d: kind %s of %s is not allowed: a PackageSet applies only %s", rel, doc, orUnset(gvk.Kind), gvk.GroupVersion(), allowedList))
		case u.GetName() == "":
			problems = append(problems, fmt.Sprintf("%s: document %d: %s without metadata.name", rel, doc, gvk.Kind))
		default:
			objects = append(objects, Object{File: rel, Object: u})
		}
	}
	return objects, problems
}

func isComment(doc []byte) bool {
	for _, line := range strings.Split(string(doc), "\n") {
		if t := strings.TrimSpace(line); t != "" && !strings.HasPrefix(t, "#") {
			return false
		}
	}
	return true
}

func orUnset(s string) string {
	if s == "" {
		return "(unset)"
	}
	return s
}
