package operator

import (
	"context"
	"runtime/debug"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
)

// Version is the operator's version, set at build time with
// -ldflags "-X github.com/skyhook-go/skyhook/cmd/manager/operator.Version=...";
// the module version otherwise.
var Version = ""

// VersionConfigMap is the ConfigMap, in the operator's namespace, where the
// running operator says its version (for `skyhook version`).
const VersionConfigMap = "skyhook-operator-version"

// VersionLabel marks that ConfigMap, so a client finds it in any namespace.
const VersionLabel = skyhookv1.MetadataPrefix + "/operator-version"

// RunningVersion is the version this binary reports: Version when the
// build stamped it, the module's version otherwise.
func RunningVersion() string {
	if Version != "" {
		return Version
	}
	return BuildVersion()
}

// BuildVersion is the version Go recorded for the binary's main module, or
// "devel" for a build from a work tree (Go records "(devel)").
func BuildVersion() string {
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// publishVersion writes the version ConfigMap once the manager runs.
func publishVersion(mgr manager.Manager, namespace string) error {
	return mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: VersionConfigMap, Namespace: namespace}}
		_, err := ctrl.CreateOrUpdate(ctx, mgr.GetClient(), cm, func() error {
			cm.Labels = map[string]string{VersionLabel: "true"}
			cm.Data = map[string]string{"version": RunningVersion()}
			return nil
		})
		if err != nil {
			ctrl.Log.Error(err, "publishing the operator version")
		}
		<-ctx.Done()
		return nil
	}))
}

// ClusterVersions reads the versions the running operators published.
func ClusterVersions(ctx context.Context, c client.Client) (map[string]string, error) {
	var list corev1.ConfigMapList
	if err := c.List(ctx, &list, client.MatchingLabels{VersionLabel: "true"}); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, cm := range list.Items {
		out[cm.Namespace] = cm.Data["version"]
	}
	return out, nil
}
