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
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
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
	url := fmt.Sprintf("https://%s/containerLogs/%s/%s/%s", c.kubeletAddr, namespace, pod, container)
	return wait.PollUntilContextTimeout(ctx, 50*time.Millisecond, 30*time.Second, true, func(ctx context.Context) (bool, error) {
		resp, err := hc.Get(url)
		if err != nil {
			return false, nil
		}
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp.StatusCode == http.StatusOK, nil
	})
}
