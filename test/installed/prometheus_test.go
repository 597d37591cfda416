package installed

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/monitoring"
	"github.com/skyhook-go/skyhook/test/promtest"
)

// scrapeInterval is short, so a test sees several scrapes in seconds.
const scrapeInterval = "2s"

// startPrometheus runs Prometheus (built from the module proxy) as a pod
// on a real node (package monitoring), scraping with jobs and, without
// the token, monitoring.WithoutTokenJob, and evaluating the rule file. It
// returns a client of its API, at the pod's address.
func startPrometheus(t *testing.T, jobs []map[string]any, rules []byte) *promtest.Client {
	t.Helper()
	ctx := context.Background()
	img, version, err := monitoring.Image(ctx, busybox, os.Stderr)
	if err != nil {
		t.Fatal(err)
	}
	image, err := public.Push(ctx, "tools/prometheus:"+version, img)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { monitoring.Delete(context.Background(), env.Clientset) })
	prom, err := monitoring.Deploy(ctx, env.Clientset, monitoring.Options{
		Image: image, NodeSelector: map[string]string{kubeletnode.Label: kubeletnode.LabelValue},
		Jobs: jobs, Rules: rules, Interval: scrapeInterval, WithoutTokenJob: true,
	}, 2*time.Minute)
	if err != nil {
		t.Fatalf("%v\n%s", err, monitoring.Log(ctx, env.Clientset))
	}
	client, err := promtest.NewClient(prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// prometheusLog is the end of the Prometheus pod's log, for a failure.
func prometheusLog() string { return monitoring.Log(context.Background(), env.Clientset) }
