package simnode

import (
	"context"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sync/errgroup"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Node describes a simulated node to create.
type Node struct {
	// Name of the node.
	Name string
	// Labels of the node, in addition to the kubernetes.io/hostname and
	// type=kwok labels every simulated node gets.
	Labels map[string]string
	// Taints of the node.
	Taints []corev1.Taint
	// BootID the node boots with; random when empty.
	BootID string
	// KubeletVersion and ContainerRuntime are what the node reports in
	// status.nodeInfo (DefaultKubeletVersion and DefaultContainerRuntime
	// when empty: a node that mounts image volumes).
	KubeletVersion, ContainerRuntime string
}

// Label marks the nodes made by this package, with the value LabelValue
// (a real node has the value "real" under the same key; see package
// kubeletnode).
const (
	Label      = "type"
	LabelValue = "kwok"
)

// Numbered returns n nodes named prefix-0 ... prefix-(n-1), each with the
// given labels.
func Numbered(prefix string, n int, labels map[string]string) []Node {
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{Name: fmt.Sprintf("%s-%d", prefix, i), Labels: labels}
	}
	return nodes
}

// bulkNodes is from how many nodes Create and WaitReady work in
// bulk: more creates at once through a client without a rate limit that
// speaks protobuf, and fewer, cheaper lists while waiting.
const bulkNodes = 1000

// Create creates the nodes and waits until they are Ready, which takes
// KWOK booting them and the node lifecycle controller lifting the not-ready
// taint. With several KWOK shards each node gets its ShardLabel (unless it
// has one).
func (f *Fleet) Create(ctx context.Context, nodes ...Node) error {
	if len(nodes) == 0 {
		return nil
	}
	cs, parallel := f.Clientset, 16
	if len(nodes) >= bulkNodes {
		var err error
		if cs, err = f.bulkClient(); err != nil {
			return err
		}
		parallel = 48
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(parallel)
	for _, n := range nodes {
		g.Go(func() error {
			_, err := cs.CoreV1().Nodes().Create(gctx, f.nodeObject(n), metav1.CreateOptions{})
			if err != nil {
				return fmt.Errorf("creating node %s: %w", n.Name, err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	names := make([]string, len(nodes))
	for i, n := range nodes {
		names[i] = n.Name
	}
	return f.WaitReady(ctx, 2*time.Minute+time.Duration(len(names))*100*time.Millisecond, names...)
}

// bulkClient is a client for many requests at once: protobuf, and no
// client-side rate limit (the apiserver's in-flight limits apply).
func (f *Fleet) bulkClient() (kubernetes.Interface, error) {
	cfg := rest.CopyConfig(f.Config)
	cfg.ContentType = "application/vnd.kubernetes.protobuf"
	cfg.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
	cfg.QPS, cfg.Burst = -1, 0
	return kubernetes.NewForConfig(cfg)
}

func (f *Fleet) nodeObject(n Node) *corev1.Node {
	labels := map[string]string{corev1.LabelHostname: n.Name, Label: LabelValue}
	if f.Shards > 1 {
		labels[ShardLabel] = strconv.Itoa(shardOf(n.Name, f.Shards))
	}
	for k, v := range n.Labels {
		labels[k] = v
	}
	annotations := map[string]string{}
	if n.BootID != "" {
		annotations[BootIDAnnotation] = n.BootID
	}
	if n.KubeletVersion != "" {
		annotations[KubeletVersionAnnotation] = n.KubeletVersion
	}
	if n.ContainerRuntime != "" {
		annotations[ContainerRuntimeAnnotation] = n.ContainerRuntime
	}
	return &corev1.Node{
		ObjectMeta: metav1.ObjectMeta{Name: n.Name, Labels: labels, Annotations: annotations},
		Spec:       corev1.NodeSpec{Taints: n.Taints},
	}
}

// WaitReady waits until every named node (simulated or not) is Ready and
// schedulable as far as readiness goes (no not-ready or unreachable
// taint). From bulkNodes names it lists every 2 s from the apiserver's
// watch cache in protobuf (listing 10,000 nodes from etcd four times a
// second would load the control plane it waits for).
func (f *Fleet) WaitReady(ctx context.Context, timeout time.Duration, names ...string) error {
	cs, every, opts := f.Clientset, 250*time.Millisecond, metav1.ListOptions{}
	if len(names) >= bulkNodes {
		var err error
		if cs, err = f.bulkClient(); err != nil {
			return err
		}
		every, opts.ResourceVersion = 2*time.Second, "0"
	}
	var notReady []string
	err := wait.PollUntilContextTimeout(ctx, every, timeout, true, func(ctx context.Context) (bool, error) {
		list, err := cs.CoreV1().Nodes().List(ctx, opts)
		if err != nil {
			return false, nil // the apiserver may be busy; keep polling
		}
		ready := map[string]bool{}
		for i := range list.Items {
			ready[list.Items[i].Name] = Ready(&list.Items[i])
		}
		notReady = notReady[:0]
		for _, name := range names {
			if !ready[name] {
				notReady = append(notReady, name)
			}
		}
		return len(notReady) == 0, nil
	})
	if err != nil {
		sort.Strings(notReady)
		if len(notReady) > 10 {
			notReady = append(notReady[:10], fmt.Sprintf("and %d more", len(notReady)-10))
		}
		return fmt.Errorf("nodes not Ready: %s: %w", strings.Join(notReady, ", "), err)
	}
	return nil
}

// Ready reports whether the node's Ready condition is True and the node
// lifecycle controller has lifted its not-ready and unreachable taints.
func Ready(node *corev1.Node) bool {
	for _, t := range node.Spec.Taints {
		if t.Key == corev1.TaintNodeNotReady || t.Key == corev1.TaintNodeUnreachable {
			return false
		}
	}
	return readyCondition(node) == corev1.ConditionTrue
}
