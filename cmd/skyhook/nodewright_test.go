package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	nodewrightv1 "github.com/skyhook-go/skyhook/api/nodewright/v1alpha1"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/cordon"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// nwKey is a NodeWright's node key.
func nwKey(name string) skyhookv1.RolloutRef { return skyhookv1.NodeWrights.Named(name) }

// skKey is a Skyhook's node key.
func skKey(name string) skyhookv1.RolloutRef { return skyhookv1.Skyhooks.Named(name) }

// createNodeWright makes a NodeWright with the packages (name → version)
// and selector, deleted when the test ends; it returns its view.
func createNodeWright(t *testing.T, name string, selector map[string]string, packages map[string]string) *skyhookv1.Skyhook {
	t.Helper()
	nw := &nodewrightv1.NodeWright{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{}}}
	nw.Spec.NodeSelector.MatchLabels = selector
	for pkg, version := range packages {
		nw.Spec.Packages[pkg] = skyhookv1.Package{PackageRef: skyhookv1.PackageRef{Version: version}, Image: "ghcr.io/x/" + pkg}
	}
	c := testenv.Client(t, env)
	if err := c.Create(context.Background(), nw); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), nw) })
	return nw.View()
}

// createSkyhook makes a Skyhook of one package, deleted when the test ends.
func createSkyhook(t *testing.T, name, pkg, version string) *skyhookv1.Skyhook {
	t.Helper()
	sk := &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: skyhookv1.SkyhookSpec{Packages: skyhookv1.Packages{
		pkg: {PackageRef: skyhookv1.PackageRef{Version: version}, Image: "ghcr.io/x/" + pkg}}}}
	c := testenv.Client(t, env)
	if err := c.Create(context.Background(), sk); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), sk) })
	return sk
}

// record is a node record of one package.
func record(pkg, version string, stage skyhookv1.Stage, state skyhookv1.State) string {
	encoded, _ := json.Marshal(skyhookv1.NodeState{skyhookv1.NodeStateKey(pkg, version): {Name: pkg, Version: version, Image: "ghcr.io/x/" + pkg, Stage: stage, State: state}})
	return string(encoded)
}

// createNode makes a node, deleted when the test ends.
func createNode(t *testing.T, n *corev1.Node) {
	t.Helper()
	c := testenv.Client(t, env)
	if err := c.Create(context.Background(), n); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Delete(context.Background(), n) })
}

func getNodeWright(t *testing.T, name string) *nodewrightv1.NodeWright {
	t.Helper()
	nw := &nodewrightv1.NodeWright{}
	if err := testenv.Client(t, env).Get(context.Background(), client.ObjectKey{Name: name}, nw); err != nil {
		t.Fatal(err)
	}
	return nw
}

// Every command that names a rollout takes a NodeWright's name, with
// --nodewright or its alias --skyhook, and reads and writes its keys
// under nodewright.nvidia.com/.
func TestNodeWrightCommands(t *testing.T) {
	createNodeWright(t, "nw", nil, map[string]string{"tuning": "1.0.0"})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "nw-a", Annotations: map[string]string{
		nwKey("nw").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete)}}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "nw-b", Annotations: map[string]string{
		nwKey("nw").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageApply, skyhookv1.StateErroring)}}})

	if out := mustRun(t, "get", "nodewrights"); !strings.Contains(out, "nodewright/nw") || strings.Contains(out, "skyhook/") {
		t.Errorf("get nodewrights:\n%s", out)
	}
	for _, flag := range []string{"--nodewright", "--skyhook"} {
		out := mustRun(t, "node", "list", flag, "nw")
		if !strings.HasPrefix(out, "NodeWright: nw\n\nSummary: 2 nodes (1 complete, 1 erroring, 0 in progress)\n") {
			t.Errorf("node list %s nw:\n%s", flag, out)
		}
	}
	var status []struct{ NodeName, SkyhookName, Kind, Status string }
	parseJSON(t, mustRun(t, "node", "status", "nw-.*", "--nodewright", "nw", "-o", "json"), &status)
	if len(status) != 2 || status[1].NodeName != "nw-b" || status[1].Kind != "NodeWright" || status[1].Status != "erroring" {
		t.Errorf("node status --nodewright nw: %+v", status)
	}
	if out := mustRun(t, "package", "status", "tuning", "--nodewright", "nw"); !strings.HasPrefix(out, "NodeWright: nw\nPackages: tuning:1.0.0\n") || !strings.Contains(out, "nw-b  tuning   1.0.0    apply   erroring") {
		t.Errorf("package status --nodewright nw:\n%s", out)
	}
	var view struct {
		Kind     string
		Packages []struct{ Complete, Erroring int }
	}
	parseJSON(t, mustRun(t, "status", "nw", "-o", "json"), &view)
	if view.Kind != "NodeWright" || len(view.Packages) != 1 || view.Packages[0].Complete != 1 || view.Packages[0].Erroring != 1 {
		t.Errorf("status nw -o json: %+v", view)
	}

	out := mustRun(t, "pause", "nw", "-y")
	if getNodeWright(t, "nw").Annotations[skyhookv1.NodeWrights.PauseAnnotation()] != "true" || out != "NodeWright \"nw\" paused\n" {
		t.Errorf("pause nw: annotations %v\n%s", getNodeWright(t, "nw").Annotations, out)
	}
	mustRun(t, "package", "rerun", "tuning", "--nodewright", "nw", "--node", "nw-b", "--stage", "apply", "-y")
	if got := getNode(t, "nw-b").Annotations[nwKey("nw").NodeStateAnnotation()]; !strings.Contains(got, `"stage":"apply","state":"in_progress"`) {
		t.Errorf("package rerun --nodewright: record %s", got)
	}
	mustRun(t, "node", "ignore", "nw-a")
	a := getNode(t, "nw-a")
	if a.Labels[skyhookv1.NodeWrights.IgnoreNodeLabel()] != "true" || a.Labels[skyhookv1.IgnoreNodeLabel] != "true" {
		t.Errorf("node ignore: labels %v, want both kinds' ignore labels", a.Labels)
	}
	if out := mustRun(t, "node", "list", "--nodewright", "nw", "-o", "wide"); !strings.Contains(out, "nw-a  complete     1/1       0         true") {
		t.Errorf("node list -o wide of an ignored node:\n%s", out)
	}
	if out := mustRun(t, "node", "unignore", "nw-a"); ignoredByAny(getNode(t, "nw-a")) || !strings.Contains(out, "Successfully unignored 1 node(s)") {
		t.Errorf("node unignore:\n%s", out)
	}
	// A node carrying only one kind's label is ignored again with both.
	patchNodeLabels(t, "nw-a", map[string]any{skyhookv1.IgnoreNodeLabel: "true"})
	if out := mustRun(t, "node", "ignore", "nw-a"); !ignoredByAll(getNode(t, "nw-a")) || !strings.Contains(out, "Successfully ignored 1 node(s)") {
		t.Errorf("node ignore of a node ignored by Skyhooks only:\n%s", out)
	}

	mustRun(t, "dp", "reset", "nw", "-y") // no compartments: nothing asked of the operator
	mustRun(t, "reset", "nw", "-y")
	if nw := getNodeWright(t, "nw"); nw.Annotations[skyhookv1.NodeWrights.ResetBatchStateAnnotation()] == "" || nw.Annotations[skyhookv1.ResetBatchStateAnnotation] != "" {
		t.Errorf("reset nw: the batch reset is not asked under nodewright.nvidia.com/: %v", nw.Annotations)
	}
	if anns := getNode(t, "nw-a").Annotations; anns[nwKey("nw").NodeStateAnnotation()] != "" {
		t.Errorf("reset nw: nw-a keeps its record %v", anns)
	}
}

// A Skyhook and a NodeWright of one name are one rollout, led by the
// NodeWright: the commands act on the NodeWright, read its record (or
// the Skyhook's where the operator has not moved it yet), and a reset
// forgets both, or the operator would move the Skyhook's back.
func TestTwinRollouts(t *testing.T) {
	createNodeWright(t, "twin", nil, map[string]string{"driver": "2.0.0"})
	createSkyhook(t, "twin", "driver", "2.0.0")
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "twin-moved", Annotations: map[string]string{
		nwKey("twin").NodeStateAnnotation(): record("driver", "2.0.0", skyhookv1.StageConfig, skyhookv1.StateComplete),
		skKey("twin").NodeStateAnnotation(): record("driver", "2.0.0", skyhookv1.StageApply, skyhookv1.StateInProgress), // a stale copy
	}}})
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "twin-unmoved", Annotations: map[string]string{
		skKey("twin").NodeStateAnnotation(): record("driver", "2.0.0", skyhookv1.StageApply, skyhookv1.StateErroring),
	}}})

	if out := mustRun(t, "get", "skyhooks"); !strings.Contains(out, "skyhook/twin") || !strings.Contains(out, "nodewright/twin") {
		t.Errorf("get skyhooks lists both kinds:\n%s", out)
	}
	var status []struct{ NodeName, Kind, Status string }
	parseJSON(t, mustRun(t, "node", "status", "twin-.*", "--skyhook", "twin", "-o", "json"), &status)
	if len(status) != 2 || status[0].NodeName != "twin-moved" || status[0].Status != "complete" || status[0].Kind != "NodeWright" ||
		status[1].NodeName != "twin-unmoved" || status[1].Status != "erroring" {
		t.Errorf("node status of twins: %+v", status)
	}
	mustRun(t, "disable", "twin", "--confirm")
	if getNodeWright(t, "twin").Annotations[skyhookv1.NodeWrights.DisableAnnotation()] != "true" || getSkyhook(t, "twin").Annotations[skyhookv1.DisableAnnotation] != "" {
		t.Errorf("disable twin: the NodeWright is not the one disabled")
	}
	out := mustRun(t, "reset", "twin", "-y", "--skip-batch-reset")
	for _, name := range []string{"twin-moved", "twin-unmoved"} {
		anns := getNode(t, name).Annotations
		if anns[nwKey("twin").NodeStateAnnotation()] != "" || anns[skKey("twin").NodeStateAnnotation()] != "" {
			t.Errorf("reset twin: %s keeps a record: %v\n%s", name, anns, out)
		}
	}
	if !strings.HasPrefix(out, "NodeWright: twin\nNodes to reset (2):\n  - twin-moved (1 packages)\n  - twin-unmoved (1 packages)\n") {
		t.Errorf("reset twin:\n%s", out)
	}
}

// reset and node reset keep the cordon of a rollout that still selects
// the node, for the re-run to lift (NodeWright's CLI v0.5.0). Where no
// re-run comes its cordon_ mark goes and its cordon is lifted, unless
// something else holds the node; when the rollout cannot be read its
// marks stay, with a warning.
func TestResetCordons(t *testing.T) {
	nw := createNodeWright(t, "cordons", map[string]string{"pool": "gpu"}, map[string]string{"tuning": "1.0.0"})
	ref := nwKey("cordons")
	signature := cordon.AnnotationOf(skyhookv1.NodeWrights)
	cordoned := func(name string, labels, more map[string]string, withRecord bool) {
		anns := map[string]string{signature: cordon.Owner(nw), ref.CordonAnnotation(): "true"}
		if withRecord {
			anns[ref.NodeStateAnnotation()] = record("tuning", "1.0.0", skyhookv1.StageInterrupt, skyhookv1.StateInProgress)
		}
		for k, v := range more {
			anns[k] = v
		}
		createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels, Annotations: anns}, Spec: corev1.NodeSpec{Unschedulable: true}})
	}
	gpu := map[string]string{"pool": "gpu"}
	cordoned("cordon-selected", gpu, nil, true)
	cordoned("cordon-only", gpu, nil, false)
	cordoned("cordon-unselected", nil, nil, true)
	cordoned("cordon-shared", nil, map[string]string{skyhookv1.NodeWrights.Named("other").CordonAnnotation(): "true"}, true)
	cordoned("cordon-runtime", nil, map[string]string{skyhookv1.NodeWrights.RuntimeRequiredCordonAnnotation(): "true"}, true)

	golden(t, "node-status-cordons.golden", mustRun(t, "node", "status", "cordon-.*"))
	out := mustRun(t, "reset", "cordons", "-y", "--skip-batch-reset")
	if !strings.Contains(out, "Nodes to reset (4):\n  - cordon-runtime (1 packages, its cordon stays: something else holds the node)\n"+
		"  - cordon-selected (1 packages, its cordon stays for the re-run to lift)\n"+
		"  - cordon-shared (1 packages, its cordon stays: something else holds the node)\n  - cordon-unselected (1 packages, lifts its cordon)\n") {
		t.Errorf("reset cordons:\n%s", out)
	}
	for _, c := range []struct {
		node              string
		mark, unscheduled bool // the cordon_ mark and the signature go together
	}{{"cordon-selected", true, true}, {"cordon-only", true, true}, {"cordon-unselected", false, false}, {"cordon-shared", false, true}, {"cordon-runtime", false, true}} {
		n := getNode(t, c.node)
		_, mark := n.Annotations[ref.CordonAnnotation()]
		_, signed := n.Annotations[signature]
		if mark != c.mark || signed != c.mark || n.Spec.Unschedulable != c.unscheduled || n.Annotations[ref.NodeStateAnnotation()] != "" {
			t.Errorf("reset cordons: %s has the mark %v, the signature %v (want %v), unschedulable %v (want %v), annotations %v",
				c.node, mark, signed, c.mark, n.Spec.Unschedulable, c.unscheduled, n.Annotations)
		}
	}

	// The NodeWright gone: NodeWright v0.20's unsigned mark, no re-run, so
	// the cordon is lifted.
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "cordon-gone", Annotations: map[string]string{
		nwKey("gone").CordonAnnotation(): "true", nwKey("gone").NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageInterrupt, skyhookv1.StateInProgress)}},
		Spec: corev1.NodeSpec{Unschedulable: true}})
	out = mustRun(t, "node", "reset", "cordon-gone", "--nodewright", "gone", "-y")
	if n := getNode(t, "cordon-gone"); n.Spec.Unschedulable || n.Annotations[nwKey("gone").CordonAnnotation()] != "" ||
		!strings.Contains(out, "NodeWright: gone\nNodes to reset (1):\n  - cordon-gone (1 packages, lifts its cordon)\n") {
		t.Errorf("node reset of a NodeWright that is gone: %v\n%s", n.Annotations, out)
	}
}

// When the rollout cannot be read (here: not allowed), a reset keeps its
// cordon_ marks and says so.
func TestResetKeepsCordonsOfAnUnreadableRollout(t *testing.T) {
	nw := createNodeWright(t, "hidden", map[string]string{"pool": "none"}, map[string]string{"tuning": "1.0.0"})
	ref := nwKey("hidden")
	createNode(t, &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "hidden-node", Annotations: map[string]string{
		cordon.AnnotationOf(skyhookv1.NodeWrights): cordon.Owner(nw), ref.CordonAnnotation(): "true",
		ref.NodeStateAnnotation(): record("tuning", "1.0.0", skyhookv1.StageInterrupt, skyhookv1.StateInProgress)}},
		Spec: corev1.NodeSpec{Unschedulable: true}})
	user := nodesOnlyUser(t)
	out := mustRun(t, "--as", user, "node", "reset", "hidden-node", "--nodewright", "hidden", "-y")
	n := getNode(t, "hidden-node")
	if n.Annotations[ref.NodeStateAnnotation()] != "" || n.Annotations[ref.CordonAnnotation()] != "true" || !n.Spec.Unschedulable ||
		!strings.Contains(out, `Warning: cannot read NodeWright or Skyhook "hidden", so its cordon_ marks stay on the nodes`) ||
		!strings.Contains(out, "  - hidden-node (1 packages, keeps its cordon_ mark)\n") {
		t.Errorf("node reset of an unreadable NodeWright: %v unschedulable %v\n%s", n.Annotations, n.Spec.Unschedulable, out)
	}
}

// nodesOnlyUser is a user (for --as) who may read and patch nodes and
// nothing else: no NodeWright or Skyhook, no Deployment.
func nodesOnlyUser(t *testing.T) string {
	t.Helper()
	const user = "cli-nodes-only"
	c := testenv.Client(t, env)
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: user}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{""}, Resources: []string{"nodes"}, Verbs: []string{"get", "list", "patch"}}}}
	binding := &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: user},
		RoleRef:  rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: user},
		Subjects: []rbacv1.Subject{{APIGroup: rbacv1.GroupName, Kind: rbacv1.UserKind, Name: user}}}
	for _, obj := range []client.Object{role, binding} {
		if err := c.Create(context.Background(), obj); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		_ = c.Delete(context.Background(), binding)
		_ = c.Delete(context.Background(), role)
	})
	return user
}
