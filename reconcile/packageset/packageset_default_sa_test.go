package packageset_test

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/fluxcd/pkg/apis/meta"
	"github.com/fluxcd/pkg/runtime/conditions"
	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/reconcile/packageset"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// An operator started with a default ServiceAccount (--default-service-account)
// applies PackageSets that name none as that account in their namespace:
// forbidden until the account is granted Skyhooks, then applied, and the
// apiserver's audit log shows the apply made as the account. The package's
// shared operator has no default, so this runs its own control plane and
// operator; that operator also allows cross-namespace references
// (--no-cross-namespace-refs=false), so the set's source is in another
// namespace and is read as before the flag existed.
func TestPackageSetUsesTheDefaultServiceAccount(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	crds, err := testenv.CRDsWithFlux()
	if err != nil {
		t.Fatal(err)
	}
	other, err := cluster.Start(ctx, cluster.Options{CRDs: crds, Audit: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(other.Stop)
	if err := operator.EnsureNamespace(ctx, other.Config, operator.DefaultNamespace); err != nil {
		t.Fatal(err)
	}
	done, err := operator.StartLocal(ctx, other.Config, operator.Options{DefaultServiceAccount: "applier", AllowCrossNamespaceRefs: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); <-done }) // before the cluster stops

	c := testenv.Client(t, other)
	tenant(t, c, "team", "applier")
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "sources"}}); err != nil {
		t.Fatal(err)
	}
	src := newSourceIn(t, c, "sources", "team-repo")
	src.publish("main@sha1:1111", map[string]string{"sets/gpu.yaml": skyhookManifest("ps-default", "1.0.0")})
	ps := &skyhookv1.PackageSet{
		ObjectMeta: metav1.ObjectMeta{Name: "team", Namespace: "team"},
		Spec: skyhookv1.PackageSetSpec{
			SourceRef: skyhookv1.SourceReference{Kind: sourcev1.GitRepositoryKind, Name: "team-repo", Namespace: "sources"},
			Path:      "sets", Interval: metav1.Duration{Duration: time.Hour}, RetryInterval: &metav1.Duration{Duration: time.Second},
		},
	}
	if err := c.Create(ctx, ps); err != nil {
		t.Fatal(err)
	}
	key := client.ObjectKeyFromObject(ps)
	user := packageset.ServiceAccountUser("team", "applier")

	got := waitStatus(t, c, key, func(p *skyhookv1.PackageSet) bool {
		return conditions.GetReason(p, meta.ReadyCondition) == packageset.ApplyFailedReason
	})
	if msg := conditions.GetMessage(got, meta.ReadyCondition); !strings.Contains(msg, "forbidden") || !strings.Contains(msg, `User "`+user+`"`) {
		t.Errorf("Ready says %q; want the default account forbidden", msg)
	}
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-default"}, &skyhookv1.Skyhook{}); !apierrors.IsNotFound(err) {
		t.Errorf("the Skyhook exists although the default account may not write one: %v", err)
	}

	grantSkyhooks(t, c, "team", "applier")
	waitStatus(t, c, key, func(p *skyhookv1.PackageSet) bool {
		return conditions.IsReady(p) && p.Status.LastAppliedRevision == "main@sha1:1111"
	})
	if err := c.Get(ctx, client.ObjectKey{Name: "ps-default"}, &skyhookv1.Skyhook{}); err != nil {
		t.Fatalf("the Skyhook: %v", err)
	}
	testenv.Eventually(t, "the audit log to show the Skyhook applied as "+user, 10*time.Second, func() bool {
		return appliedAs(t, other.AuditLog, "ps-default") == user
	})
}

// appliedAs is the user impersonated by the last audited PackageSet apply
// (its field manager, not a dry run) of the Skyhook that succeeded, or
// empty.
func appliedAs(t *testing.T, auditLog, skyhook string) string {
	t.Helper()
	f, err := os.Open(auditLog)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var last string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 16<<20)
	for sc.Scan() {
		var e struct {
			Verb       string `json:"verb"`
			RequestURI string `json:"requestURI"`
			ObjectRef  *struct {
				Resource string `json:"resource"`
				Name     string `json:"name"`
			} `json:"objectRef"`
			ImpersonatedUser *struct {
				Username string `json:"username"`
			} `json:"impersonatedUser"`
			ResponseStatus *metav1.Status `json:"responseStatus"`
		}
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.ObjectRef == nil || e.ObjectRef.Resource != "skyhooks" || e.ObjectRef.Name != skyhook ||
			e.Verb != "patch" || !strings.Contains(e.RequestURI, "fieldManager="+packageset.FieldOwner) || strings.Contains(e.RequestURI, "dryRun") || e.ResponseStatus == nil || e.ResponseStatus.Code >= 300 {
			continue
		}
		last = ""
		if e.ImpersonatedUser != nil {
			last = e.ImpersonatedUser.Username
		}
	}
	return last
}
