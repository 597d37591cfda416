package chaos

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"k8s.io/apimachinery/pkg/util/wait"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// operators are two replicas of the operator binary with leader election,
// and the webhook proxy the apiserver calls: it forwards to whichever
// replica answers, and can refuse everything for a while (a webhook that
// is unreachable).
type operators struct {
	mu       sync.Mutex
	replicas [2]*exec.Cmd
	ports    [2]int
	metrics  [2]int
	dir      string
	proxy    net.Listener
	down     bool // the proxy refuses connections
	// killed are the processes the test killed; a replica that exits by
	// itself (it lost its lease while the apiserver was away) is started
	// again after a second, as a kubelet restarts a container, and counted.
	killed  map[*exec.Cmd]bool
	exits   int
	stopped bool
}

func startOperators(c *cluster.Cluster, dir string) (*operators, error) {
	ports, err := proc.FreePorts(4)
	if err != nil {
		return nil, err
	}
	o := &operators{dir: dir, killed: map[*exec.Cmd]bool{}}
	copy(o.ports[:], ports[:2])
	copy(o.metrics[:], ports[2:])
	if o.proxy, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		return nil, err
	}
	go o.serveProxy()
	for i := range o.replicas {
		if err := o.start(c, i); err != nil {
			return nil, err
		}
	}
	return o, nil
}

// start runs replica i as the operator user, its webhook server on its
// own port, advertising the proxy's.
func (o *operators) start(c *cluster.Cluster, i int) error {
	log, err := os.OpenFile(filepath.Join(c.Dir, "logs", fmt.Sprintf("operator-%d.log", i)), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	cmd := exec.Command(managerBinary, "--kubeconfig="+c.OperatorKubeconfig, "--namespace="+operatorNamespace,
		"--leader-elect",
		"--webhook-host=127.0.0.1", "--webhook-port="+strconv.Itoa(o.ports[i]),
		"--local-webhook-host=localhost:"+strconv.Itoa(o.proxy.Addr().(*net.TCPAddr).Port),
		"--cert-dir="+filepath.Join(o.dir, fmt.Sprintf("certs-%d", i)),
		"--metrics-bind-address=127.0.0.1:"+strconv.Itoa(o.metrics[i]), "--metrics-secure=false", "--health-probe-bind-address=0",
		// Interrupt and stage timeouts far beyond the run: a fault must
		// never be papered over by a timeout.
		"--reboot-timeout=30m", "--not-ready-timeout=30m")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		log.Close()
		return err
	}
	o.mu.Lock()
	o.replicas[i] = cmd
	o.mu.Unlock()
	go func() {
		_ = cmd.Wait()
		log.Close()
		o.restartIfExited(c, i, cmd)
	}()
	return nil
}

// restartIfExited starts replica i again when cmd ended by itself.
func (o *operators) restartIfExited(c *cluster.Cluster, i int, cmd *exec.Cmd) {
	o.mu.Lock()
	byItself := !o.stopped && !o.killed[cmd] && o.replicas[i] == cmd
	if byItself {
		o.exits++
	}
	o.mu.Unlock()
	if byItself {
		time.Sleep(time.Second)
		_ = o.start(c, i)
	}
}

// exitedByThemselves counts the replicas' own exits.
func (o *operators) exitedByThemselves() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.exits
}

// kill SIGKILLs replica i and starts it again after pause.
func (o *operators) kill(c *cluster.Cluster, i int, pause time.Duration) error {
	o.mu.Lock()
	cmd := o.replicas[i]
	o.killed[cmd] = true
	o.mu.Unlock()
	_ = cmd.Process.Kill()
	time.Sleep(pause)
	return o.start(c, i)
}

// leader is the index of the replica that says it leads (client-go's
// leader_election_master_status gauge is 1 there), -1 when none does.
// The Lease's holder names a hostname the two share, so it cannot tell.
func (o *operators) leader() int {
	for i, port := range o.metrics {
		resp, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/metrics")
		if err != nil {
			continue
		}
		parser := expfmt.NewTextParser(model.UTF8Validation)
		families, err := parser.TextToMetricFamilies(resp.Body)
		resp.Body.Close()
		if err != nil {
			continue
		}
		for _, m := range families["leader_election_master_status"].GetMetric() {
			if m.GetGauge().GetValue() == 1 {
				return i
			}
		}
	}
	return -1
}

// setWebhookDown makes the proxy refuse (true) or forward (false).
func (o *operators) setWebhookDown(down bool) {
	o.mu.Lock()
	o.down = down
	o.mu.Unlock()
}

func (o *operators) serveProxy() {
	for {
		in, err := o.proxy.Accept()
		if err != nil {
			return
		}
		go o.forward(in)
	}
}

// forward sends a connection to the first replica that accepts it.
func (o *operators) forward(in net.Conn) {
	defer in.Close()
	o.mu.Lock()
	down, ports := o.down, o.ports
	o.mu.Unlock()
	if down {
		return
	}
	var out net.Conn
	for _, p := range ports {
		c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(p), time.Second)
		if err == nil {
			out = c
			break
		}
	}
	if out == nil {
		return
	}
	defer out.Close()
	done := make(chan struct{}, 2)
	go func() { _, _ = io.Copy(out, in); done <- struct{}{} }()
	go func() { _, _ = io.Copy(in, out); done <- struct{}{} }()
	<-done
}

func (o *operators) stop() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.stopped = true
	for _, cmd := range o.replicas {
		if cmd != nil {
			_ = cmd.Process.Kill()
		}
	}
	o.proxy.Close()
}

// waitAdmitting waits up to a minute for a dry run of obj's creation to
// pass the webhooks: replicas just started may not serve them yet, and
// the proxy then closes the apiserver's call (seen in CI as an EOF).
func waitAdmitting(ctx context.Context, c client.Client, obj client.Object) error {
	var last error
	err := wait.PollUntilContextTimeout(ctx, 500*time.Millisecond, time.Minute, true, func(ctx context.Context) (bool, error) {
		last = c.Create(ctx, obj.DeepCopyObject().(client.Object), client.DryRunAll)
		return last == nil, nil
	})
	if err != nil {
		return fmt.Errorf("the webhooks admitted no dry run within a minute: %w", last)
	}
	return nil
}
