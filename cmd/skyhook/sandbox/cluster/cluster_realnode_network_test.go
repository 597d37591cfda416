package cluster_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// TestRealNodesShareANetwork starts two real nodes on a network of their
// own: each registers its own address as its InternalIP, a pod on one
// serves HTTP that this machine and a pod on the other fetch by the pod's
// IP, and the client's log comes back through the apiserver, which reached
// the second kubelet at its address and checked its certificate, as
// kubectl exec does the first's. Through kube-proxy a pod reaches the
// server by its Service and the apiserver by the kubernetes Service; the
// apiserver reaches the Service's endpoint. After Stop the network's
// bridge is gone.
func TestRealNodesShareANetwork(t *testing.T) {
	if err := kubeletnode.Supported(); err != nil {
		t.Skipf("no real node on this machine: %v", err)
	}
	ctx := context.Background()
	pauseRef := pushPause(t)
	c, err := cluster.Start(ctx, cluster.Options{Nodes: []simnode.Node{{Name: "simulated"}}, RealNodeNetwork: true, Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	nodes := map[string]*kubeletnode.Node{}
	for _, name := range []string{"metal-a", "metal-b"} {
		if nodes[name], err = c.AddRealNode(ctx, kubeletnode.Options{Name: name, PauseImage: pauseRef.ref, Registries: []string{pauseRef.registry}}); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("each node registers its own address", func(t *testing.T) {
		seen := map[string]bool{}
		for name, n := range nodes {
			node, err := c.Clientset.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			ip := internalIP(node)
			if ip != n.Address.String() || n.Address.IsLoopback() || seen[ip] {
				t.Errorf("%s: InternalIP %q, node address %s: want its own, not loopback, not shared (seen %v)", name, ip, n.Address, seen)
			}
			seen[ip] = true
		}
	})

	const page = "served-by-metal-a"
	server := runPod(t, c, nodes["metal-a"], pauseRef.ref, "server", corev1.RestartPolicyAlways,
		"mkdir -p /www && echo "+page+" > /www/index.html && exec /bin/busybox httpd -f -p 8080 -h /www", corev1.PodRunning)
	serverIP, err := netip.ParseAddr(server.Status.PodIP)
	if err != nil {
		t.Fatalf("server pod IP %q: %v", server.Status.PodIP, err)
	}

	t.Run("this machine reaches a pod by its IP", func(t *testing.T) {
		if serverIP.IsLoopback() || serverIP == nodes["metal-a"].Address {
			t.Fatalf("the server pod has %s: want an address from metal-a's pod range", serverIP)
		}
		url := fmt.Sprintf("http://%s:8080/", serverIP)
		var body []byte
		deadline := time.Now().Add(30 * time.Second)
		for {
			resp, err := http.Get(url)
			if err == nil {
				body, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			if err == nil || time.Now().After(deadline) {
				if err != nil {
					t.Fatalf("GET %s: %v", url, err)
				}
				break
			}
			time.Sleep(300 * time.Millisecond)
		}
		if strings.TrimSpace(string(body)) != page {
			t.Errorf("GET %s: %q, want %q", url, body, page)
		}
	})

	t.Run("a pod on the other node reaches it, and its log comes through the apiserver", func(t *testing.T) {
		runPod(t, c, nodes["metal-b"], pauseRef.ref, "client", corev1.RestartPolicyNever,
			// nc, not wget: the static busybox's wget died of SIGSEGV
			// (exit 139) in this pod.
			fmt.Sprintf("printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /bin/busybox nc -w 10 %s 8080", serverIP), corev1.PodSucceeded)
		logs, err := c.Clientset.CoreV1().Pods("default").GetLogs("client", &corev1.PodLogOptions{}).DoRaw(ctx)
		if err != nil || !strings.HasSuffix(strings.TrimSpace(string(logs)), "\n"+page) {
			t.Errorf("the client's log through the apiserver: %q, %v", logs, err)
		}
	})

	svc, err := c.Clientset.CoreV1().Services("default").Create(ctx, &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": "server"},
			Ports: []corev1.ServicePort{{Port: 80, TargetPort: intstr.FromInt32(8080)}}},
	}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}

	t.Run("a pod reaches a Service on the other node through kube-proxy", func(t *testing.T) {
		runPod(t, c, nodes["metal-b"], pauseRef.ref, "service-client", corev1.RestartPolicyNever,
			untilAnswered(fmt.Sprintf("printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /bin/busybox nc -w 3 %s 80", svc.Spec.ClusterIP), page), corev1.PodSucceeded)
	})

	t.Run("a pod reaches the apiserver through the kubernetes Service", func(t *testing.T) {
		// Plain HTTP to the apiserver's TLS port: Go's TLS server answers
		// that it is one, which only the apiserver here would.
		runPod(t, c, nodes["metal-a"], pauseRef.ref, "apiserver-client", corev1.RestartPolicyNever,
			untilAnswered("printf 'GET / HTTP/1.0\\r\\n\\r\\n' | /bin/busybox nc -w 3 $KUBERNETES_SERVICE_HOST $KUBERNETES_SERVICE_PORT",
				"Client sent an HTTP request to an HTTPS server"), corev1.PodSucceeded)
	})

	t.Run("the apiserver reaches a Service's endpoint", func(t *testing.T) {
		body, err := c.Clientset.CoreV1().Services("default").ProxyGet("http", "web", "80", "/", nil).DoRaw(ctx)
		if err != nil || strings.TrimSpace(string(body)) != page {
			t.Errorf("the apiserver's proxy to the Service: %q, %v", body, err)
		}
	})

	t.Run("kubectl exec reaches the kubelet at its address", func(t *testing.T) {
		out, err := c.Kubectl("exec", "-n", "default", "server", "--", "cat", "/www/index.html")
		if err != nil || strings.TrimSpace(out) != page {
			t.Errorf("kubectl exec: %q, %v", out, err)
		}
	})

	c.Stop()
	stopped = true
	if left, err := nodenet.Bridges(); err != nil || len(left) > 0 {
		t.Errorf("bridges left after Stop: %v, %v", left, err)
	}
}

// runPod runs script in the pause image on the node, off the host
// network, and waits for the pod to reach phase.
func runPod(t *testing.T, c *cluster.Cluster, node *kubeletnode.Node, image, name string, restart corev1.RestartPolicy, script string, phase corev1.PodPhase) *corev1.Pod {
	t.Helper()
	ctx := context.Background()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default", Labels: map[string]string{"app": name}}, Spec: corev1.PodSpec{
		NodeName: node.Name, RestartPolicy: restart,
		Containers: []corev1.Container{{Name: name, Image: image, Command: []string{"/bin/sh", "-c", script}}},
	}}
	if _, err := c.Clientset.CoreV1().Pods("default").Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		p, err := c.Clientset.CoreV1().Pods("default").Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == phase {
			return p
		}
		if time.Now().After(deadline) || (err == nil && p.Status.Phase == corev1.PodFailed) {
			var status any
			if p != nil {
				status = p.Status
			}
			t.Fatalf("pod %s on %s did not reach %s: %+v, %v\n%s", name, node.Name, phase, status, err, proc.TailFile(node.KubeletLog, 20))
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// untilAnswered is a script that runs request (a shell pipeline) once a
// second until its output holds answer, for up to 30 tries, printing the
// last output; it fails if no try was answered. kube-proxy programs a new
// Service within seconds, not at once.
func untilAnswered(request, answer string) string {
	return fmt.Sprintf(`i=0; while test $i -lt 30; do out=$(%s 2>&1); case "$out" in *%q*) echo "$out"; exit 0;; esac; i=$((i+1)); sleep 1; done; echo "$out"; exit 1`, request, answer)
}

// internalIP is the node's InternalIP address, or "".
func internalIP(node *corev1.Node) string {
	for _, a := range node.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}
