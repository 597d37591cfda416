package helm_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/skyhook-go/skyhook/config/helm"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// nodewrightValues reads a values file of NodeWright's kept in
// test/reference/nodewright.
func nodewrightValues(t *testing.T, path string) map[string]any {
	t.Helper()
	dir, err := testenv.ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	values, err := readValues(filepath.Join(dir, "nodewright", path))
	if err != nil {
		t.Fatal(err)
	}
	return values
}

// NodeWright's own values files (its chart's defaults and those of its
// helm end-to-end tests) install this chart unchanged, and the values the
// two charts share mean the same here; the one its suite expects refused
// is refused, naming the two values in conflict.
func TestNodeWrightValuesFilesInstall(t *testing.T) {
	rel := helm.Release{Name: "foobar", Namespace: "skyhook"}
	const suite = "k8s-tests/chainsaw/helm/"

	upstreamDefaults := render(t, rel, nodewrightValues(t, "chart/values.yaml"))
	dep := deployment(t, upstreamDefaults)
	pod := dep.Spec.Template.Spec
	args := strings.Join(pod.Containers[0].Args, " ")
	// NodeWright's default images (nvcr.io/nvidia/skyhook/operator:v0.15.0
	// and agent:v6.4.1) are replaced by this chart's.
	if pod.Containers[0].Image != "ghcr.io/skyhook-go/skyhook-operator:"+chartAppVersion(t) ||
		!strings.Contains(args, "--agent-image=ghcr.io/skyhook-go/skyhook-agent:"+chartAppVersion(t)) ||
		!strings.Contains(args, "--pause-image=registry.k8s.io/pause:3.10") || !strings.Contains(args, "--leader-elect=true") {
		t.Errorf("NodeWright's default images and options: image %s, args %s", pod.Containers[0].Image, args)
	}
	if dep.Name != "foobar-skyhook-operator-controller-manager" || *dep.Spec.Replicas != 2 {
		t.Errorf("deployment %s with %d replicas, want NodeWright's name and 2", dep.Name, *dep.Spec.Replicas)
	}
	if !strings.Contains(manifest(t, upstreamDefaults, "LimitRange"), "memory: 512Mi") {
		t.Error("NodeWright's default LimitRange is not made")
	}

	pod = deployment(t, render(t, rel, nodewrightValues(t, suite+"helm-chart-test/values.yaml"))).Spec.Template.Spec
	if len(pod.Tolerations) != 1 || pod.Tolerations[0].Value != "system-cpu" ||
		!strings.Contains(strings.Join(pod.Containers[0].Args, " "), "--agent-image=ghcr.io/nvidia/skyhook/agentless:6.2.0") {
		t.Errorf("helm-chart-test's toleration and agent image: %+v %v", pod.Tolerations, pod.Containers[0].Args)
	}

	pod = deployment(t, render(t, rel, nodewrightValues(t, suite+"helm-node-affinity-test/values-match.yaml"))).Spec.Template.Spec
	terms := pod.Affinity.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms[0].MatchExpressions
	if len(terms) != 4 || terms[2].Key != "node-role.kubernetes.io/control-plane" || terms[3].Values[0] != "skyhooke2e" {
		t.Errorf("helm-node-affinity-test's expressions: %+v", terms)
	}

	resources := deployment(t, render(t, rel, nodewrightValues(t, suite+"helm-scale-test/vaules-override-resources.yaml"))).Spec.Template.Spec.Containers[0].Resources
	if resources.Limits.Cpu().String() != "200m" || resources.Requests.Memory().String() != "64Mi" {
		t.Errorf("helm-scale-test's resources are not used as given: %+v", resources)
	}
	for _, path := range []string{"helm-scale-test/values-scale.yaml", "helm-node-affinity-test/values-no-match.yaml", "helm-webhook-test/values.yaml"} {
		render(t, rel, nodewrightValues(t, suite+path))
	}

	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	_, err = helm.Render(ch, rel, nodewrightValues(t, suite+"helm-node-affinity-test/values-conflict-test.yaml"))
	if err == nil || !strings.Contains(err.Error(), "controllerManager.selectors and controllerManager.nodeAffinity.matchExpressions") {
		t.Errorf("values-conflict-test: %v, want both values named", err)
	}
}

// Bad values are refused before anything is applied, naming the value and
// the rule.
func TestBadValuesAreRefusedNamingTheValue(t *testing.T) {
	ch, err := helm.Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rel    helm.Release
		values map[string]any
		want   []string
	}{
		{helm.Default, map[string]any{"controllerManager": map[string]any{"replicas": "two"}}, []string{"/controllerManager/replicas", "want integer"}},
		{helm.Default, map[string]any{"estimatedNodeCount": 0}, []string{"estimatedNodeCount", "minimum"}},
		{helm.Default, map[string]any{"controllerManager": map[string]any{"manager": map[string]any{"env": map[string]any{"logLevel": "loud"}}}}, []string{"logLevel"}},
		{helm.Default, map[string]any{"webhook": map[string]any{"certManager": map[string]any{"enabeld": true}}}, []string{"enabeld"}},
		{helm.Default, map[string]any{"controllerManager": map[string]any{"podDisruptionBudget": map[string]any{"minAvailable": 2}}}, []string{"minAvailable (2) must be less than controllerManager.replicas (2)"}},
		{helm.Default, map[string]any{"packageSets": map[string]any{"defaultServiceAccount": "Fleet Deployer"}}, []string{"/packageSets/defaultServiceAccount"}},
		{helm.Release{Name: "skyhook-operator", Namespace: "default"}, nil, []string{"must not be default"}},
	} {
		_, err := helm.Render(ch, c.rel, c.values)
		for _, want := range c.want {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("values %v in %s: %v, want %q", c.values, c.rel.Namespace, err, want)
			}
		}
	}
}
