// Package testenv holds what the integration tests share: a client for a
// cluster started by package cluster, and the location of the reference
// manifests (test/reference).
package testenv

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/skyhook-go/skyhook/api/scheme"
	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// Client returns a controller-runtime client for the cluster, with the
// operator's scheme (built-in and Skyhook kinds).
func Client(t testing.TB, c *cluster.Cluster) client.WithWatch {
	t.Helper()
	cl, err := client.NewWithWatch(c.Config, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

// WarningClient is Client, and a function returning the admission warnings
// the API server sent with its answers so far (what kubectl prints as
// "Warning: ...").
func WarningClient(t testing.TB, c *cluster.Cluster) (client.Client, func() []string) {
	t.Helper()
	warnings := &warningLog{}
	cfg := rest.CopyConfig(c.Config)
	cfg.WarningHandler = warnings
	cl, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		t.Fatal(err)
	}
	return cl, warnings.all
}

type warningLog struct {
	mu   sync.Mutex
	seen []string
}

func (w *warningLog) HandleWarningHeader(_ int, _ string, text string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.seen = append(w.seen, text)
}

func (w *warningLog) all() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.seen...)
}

// SeedExamples returns the reference system's manifests that must be
// accepted unchanged (test/reference/testdata/seed-examples), by file name.
func SeedExamples(t testing.TB) map[string][]byte {
	t.Helper()
	shared, err := ReferenceDir()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(shared, "testdata", "seed-examples", "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no seed examples under %s (%v)", shared, err)
	}
	out := make(map[string][]byte, len(files))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = data
	}
	return out
}

// ReferenceDir is the repository's copy of the reference material
// (test/reference): the manifests and package configs the project must
// accept unchanged, and objects NodeWright wrote in a real run. The tests
// read only this copy, so a clone of the repository alone passes them.
func ReferenceDir() (string, error) {
	root, err := RepoRoot()
	if err != nil {
		return "", err
	}
	return filepath.Join(root, "test", "reference"), nil
}

// RepoRoot is the directory holding the project's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Build builds a command of this repository (pkg, such as ./cmd/manager)
// to out, with extra go build flags, for tests that run the real binary.
func Build(out, pkg string, flags ...string) error {
	root, err := RepoRoot()
	if err != nil {
		return err
	}
	args := append(append([]string{"build"}, flags...), "-o", out, pkg)
	cmd := exec.Command("go", args...)
	cmd.Dir = root
	if output, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, output)
	}
	return nil
}

// BuildCLI builds this repository's skyhook command to out, for tests
// that run it as a person would (`skyhook package logs`, the plugin's
// commands).
func BuildCLI(out string) error { return Build(out, "./cmd/skyhook") }

// CLI runs the skyhook command built at path (BuildCLI) against the
// cluster and returns what it printed; it fails the test when the command
// fails.
func CLI(t testing.TB, path string, c *cluster.Cluster, args ...string) string {
	t.Helper()
	out, err := exec.Command(path, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("skyhook %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// OperatorLogs sends the controller-runtime log of an operator running in
// the test process to <cluster dir>/logs/operator.log.
func OperatorLogs(c *cluster.Cluster) error {
	f, err := os.OpenFile(filepath.Join(c.Dir, "logs", "operator.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	ctrl.SetLogger(zap.New(zap.WriteTo(f)))
	return nil
}

// BusyWatcher follows the nodes' status labels for a Skyhook and keeps the
// most nodes it saw in progress (or erroring) at the same time.
type BusyWatcher struct {
	mu     sync.Mutex
	status map[string]string
	busy   int
	most   int
	seen   map[string]map[string]bool // status → nodes seen with it
}

// WatchBusyNodes starts a BusyWatcher on the nodes matching selector until
// ctx ends.
func WatchBusyNodes(ctx context.Context, c *cluster.Cluster, selector string, rollout skyhookv1.RolloutRef) (*BusyWatcher, error) {
	b := &BusyWatcher{status: map[string]string{}, seen: map[string]map[string]bool{}}
	key := rollout.StatusKey()
	// An informer, not a bare watch: at 10,000 nodes a watch the apiserver
	// ends is re-established (a bare one would stop counting).
	factory := informers.NewSharedInformerFactoryWithOptions(c.Clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = selector }))
	see := func(o any) {
		if node, ok := o.(*corev1.Node); ok {
			b.observe(node.Name, node.Labels[key])
		}
	}
	if _, err := factory.Core().V1().Nodes().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    see,
		UpdateFunc: func(_, o any) { see(o) },
	}); err != nil {
		return nil, err
	}
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return b, nil
}

func (b *BusyWatcher) observe(node, status string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	wasBusy, isBusy := busy(b.status[node]), busy(status)
	b.status[node] = status
	if b.seen[status] == nil {
		b.seen[status] = map[string]bool{}
	}
	b.seen[status][node] = true
	switch {
	case isBusy && !wasBusy:
		b.busy++
	case wasBusy && !isBusy:
		b.busy--
	}
	b.most = max(b.most, b.busy)
}

func busy(status string) bool {
	return status == string(skyhookv1.StatusInProgress) || status == string(skyhookv1.StatusErroring)
}

// Seen is how many nodes have been seen with the status.
func (b *BusyWatcher) Seen(status string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.seen[status])
}

// TakeMost returns the most busy nodes seen since the last call.
func (b *BusyWatcher) TakeMost() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	m := b.most
	b.most = b.busy
	return m
}

// Eventually polls cond every 200 ms until it holds, and fails the test
// when it does not within timeout.
func Eventually(t testing.TB, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	err := wait.PollUntilContextTimeout(context.Background(), 200*time.Millisecond, timeout, true, func(context.Context) (bool, error) {
		return cond(), nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", what, err)
	}
}

// WaitWarning waits up to a minute for a Warning event about the named
// object with the reason and a note containing note.
func WaitWarning(t testing.TB, c *cluster.Cluster, regarding, reason, note string) {
	t.Helper()
	WaitEvent(t, c, Event{Type: corev1.EventTypeWarning, Regarding: regarding, Reason: reason, Note: note})
}

// Event is an event WaitEvent waits for: its type (Normal, Warning), the
// name of the object it is about, its reason, and text its note contains.
type Event struct {
	Type, Regarding, Reason, Note string
}

// WaitEvent waits up to a minute for an event like want.
func WaitEvent(t testing.TB, c *cluster.Cluster, want Event) {
	t.Helper()
	eventType, regarding, reason, note := want.Type, want.Regarding, want.Reason, want.Note
	Eventually(t, "a "+reason+" event about "+regarding, time.Minute, func() bool {
		events, err := c.Clientset.EventsV1().Events("").List(context.Background(), metav1.ListOptions{})
		if err != nil {
			return false
		}
		for _, e := range events.Items {
			if e.Regarding.Name == regarding && e.Reason == reason && e.Type == eventType && strings.Contains(e.Note, note) {
				return true
			}
		}
		return false
	})
}
