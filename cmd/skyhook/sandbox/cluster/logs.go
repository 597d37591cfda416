package cluster

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// Container logs. A real kubelet serves `kubectl logs` from the files the
// container runtime writes; KWOK's kubelet API serves them from the file a
// Logs object (kwok.x-k8s.io) names for a pod's container. WriteContainerLog
// is the runtime's part here: it appends lines in the runtime's (CRI) log
// format and points KWOK at the file, so logs travel the real path:
// client → apiserver → kubelet API on the node's address.

var logsGVR = schema.GroupVersionResource{Group: "kwok.x-k8s.io", Version: "v1alpha1", Resource: "logs"}

// logsMu serialises writes of Logs objects: each lists every container log
// file of its pod, so two containers of a pod must not race.
var logsMu sync.Mutex

// WriteContainerLog appends lines to what the pod's container printed (to
// stdout), and returns once KWOK serves the container's log.
func (c *Cluster) WriteContainerLog(ctx context.Context, namespace, pod, container string, lines ...string) error {
	logsMu.Lock()
	defer logsMu.Unlock()
	dir := filepath.Join(c.Dir, "container-logs", namespace, pod)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	file := filepath.Join(dir, container+".log")
	_, err := os.Stat(file)
	isNew := os.IsNotExist(err)
	f, err := os.OpenFile(file, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	var b strings.Builder
	for _, l := range lines {
		fmt.Fprintf(&b, "%s stdout F %s\n", time.Now().UTC().Format(time.RFC3339Nano), l)
	}
	if _, err := f.WriteString(b.String()); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if !isNew {
		return nil
	}
	if err := c.applyLogs(ctx, namespace, pod, dir); err != nil {
		return err
	}
	return c.waitKubeletLog(ctx, namespace, pod, container)
}

// applyLogs points KWOK at every container log file of the pod.
func (c *Cluster) applyLogs(ctx context.Context, namespace, pod, dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	var logs []any
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".log")
		logs = append(logs, map[string]any{"containers": []any{name}, "logsFile": f})
	}
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "kwok.x-k8s.io/v1alpha1",
		"kind":       "Logs",
		"metadata":   map[string]any{"name": pod, "namespace": namespace},
		"spec":       map[string]any{"logs": logs},
	}}
	dyn, err := dynamic.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	_, err = dyn.Resource(logsGVR).Namespace(namespace).Apply(ctx, pod, obj, metav1.ApplyOptions{FieldManager: "skyhook-sim", Force: true})
	if err != nil {
		return fmt.Errorf("pointing KWOK at the logs of %s/%s: %w", namespace, pod, err)
	}
	return nil
}

// waitKubeletLog waits until KWOK has seen the Logs object: its kubelet API
// answers for the container (KWOK learns of Logs objects through a watch).
func (c *Cluster) waitKubeletLog(ctx context.Context, namespace, pod, container string) error {
	ca, err := os.ReadFile(c.pki.CAFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(ca)
	hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots}}}
	url := fmt.Sprintf("https://%s/containerLogs/%s/%s/%s", c.kubeletAddrOf(ctx, namespace, pod), namespace, pod, container)
	last := "no answer yet"
	// A minute, not less: on a busy machine (CI runs every package's
	// cluster at once) KWOK's watch of Logs objects was seen to lag 30 s.
	err = wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			last = err.Error()
			return false, nil
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		last = resp.Status
		return resp.StatusCode == http.StatusOK, nil
	})
	if err != nil {
		return fmt.Errorf("KWOK's kubelet API did not serve the log of %s/%s container %s (%s, last answer: %s): %w", namespace, pod, container, url, last, err)
	}
	return nil
}

// kubeletAddrOf is the kubelet API address of the KWOK shard that manages
// the pod's node: the only one with one shard, otherwise that of the
// node's simnode.ShardLabel (the first shard's when the pod, its node or
// the label cannot be read).
func (c *Cluster) kubeletAddrOf(ctx context.Context, namespace, pod string) string {
	if len(c.kubeletAddrs) == 1 {
		return c.kubeletAddrs[0]
	}
	p, err := c.Clientset.CoreV1().Pods(namespace).Get(ctx, pod, metav1.GetOptions{})
	if err != nil || p.Spec.NodeName == "" {
		return c.kubeletAddrs[0]
	}
	n, err := c.Clientset.CoreV1().Nodes().Get(ctx, p.Spec.NodeName, metav1.GetOptions{})
	if err != nil {
		return c.kubeletAddrs[0]
	}
	if i, err := strconv.Atoi(n.Labels[simnode.ShardLabel]); err == nil && i >= 0 && i < len(c.kubeletAddrs) {
		return c.kubeletAddrs[i]
	}
	return c.kubeletAddrs[0]
}

// SimulateContainerLogs gives every container of a stage pod on a simulated
// node a log once it has run, every 200ms until ctx ends, so `skyhook package logs` has
// something to show in the sandbox. The lines say they are simulated: no
// agent runs on a KWOK node, so they name what would have run and its exit
// code.
func (c *Cluster) SimulateContainerLogs(ctx context.Context) {
	logged := map[string]bool{}
	go wait.UntilWithContext(ctx, func(ctx context.Context) {
		pods, err := c.Clientset.CoreV1().Pods("").List(ctx, metav1.ListOptions{LabelSelector: simnode.StagePodSelector})
		if err != nil {
			return
		}
		for i := range pods.Items {
			pod := &pods.Items[i]
			if c.onRealNode(pod.Spec.NodeName) { // its kubelet has the real logs
				continue
			}
			for _, s := range pod.Status.InitContainerStatuses {
				key := string(pod.UID) + "/" + s.Name
				if s.State.Terminated == nil || logged[key] {
					continue
				}
				lines := []string{
					fmt.Sprintf("[simulated by KWOK] %s ran %s", s.Name, strings.Join(containerCommand(pod, s.Name), " ")),
					fmt.Sprintf("[simulated by KWOK] %s exited %d", s.Name, s.State.Terminated.ExitCode),
				}
				if c.WriteContainerLog(ctx, pod.Namespace, pod.Name, s.Name, lines...) == nil {
					logged[key] = true
				}
			}
		}
	}, 200*time.Millisecond)
}

// containerCommand is what the pod's container runs: its image, command and
// arguments.
func containerCommand(pod *corev1.Pod, name string) []string {
	for _, ct := range pod.Spec.InitContainers {
		if ct.Name == name {
			return append(append([]string{ct.Image}, ct.Command...), ct.Args...)
		}
	}
	return nil
}
