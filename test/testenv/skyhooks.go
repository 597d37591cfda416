package testenv

import (
	"context"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// CreateSkyhook creates the Skyhook and, when the test ends, deletes it
// and waits up to gone for its finalizer to let it go (the operator undoes
// its cordons and records meanwhile), so that the next test finds the
// nodes as they were.
func CreateSkyhook(t testing.TB, c *cluster.Cluster, sk *skyhookv1.Skyhook, gone time.Duration) {
	t.Helper()
	kube := Client(t, c)
	if err := kube.Create(context.Background(), sk); err != nil {
		t.Fatalf("creating Skyhook %s: %v", sk.Name, err)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := kube.Delete(ctx, &skyhookv1.Skyhook{ObjectMeta: metav1.ObjectMeta{Name: sk.Name}}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting Skyhook %s: %v", sk.Name, err)
		}
		Eventually(t, "Skyhook "+sk.Name+" to be gone", gone, func() bool {
			return apierrors.IsNotFound(kube.Get(ctx, client.ObjectKey{Name: sk.Name}, &skyhookv1.Skyhook{}))
		})
	})
}
