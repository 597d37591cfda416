// Package sandbox runs the local cluster of package cluster in the
// background for people: `skyhook sandbox up` starts a supervisor process
// that owns the cluster, `down` stops it and everything it started, `status`
// says what runs.
//
// The supervisor is this same program re-executed as `sandbox serve`, in its
// own session so it outlives the terminal. The cluster's processes die with
// it (see package cluster), and their pid files let `down` clean up even
// after the supervisor was killed.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/skyhook-go/skyhook/api/scheme"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/config"
)

// Options configure the sandbox.
type Options struct {
	// StateDir holds everything the sandbox writes: the kubeconfig, logs,
	// pid files and the cluster's data.
	StateDir string
	// Nodes is the number of simulated nodes.
	Nodes int
	// NodeLabels are put on every node. DefaultNodeLabels select the nodes
	// for the demo Skyhook of the reference system's quick start.
	NodeLabels map[string]string
	// Out receives what a person should read.
	Out io.Writer
	// Demo rolls out the demo Skyhook once the sandbox is up, showing
	// progress until it is Ready.
	Demo bool
	// Flux also runs Flux's source-controller, a Git server and an OCI
	// registry on loopback, for PackageSets (see flux.go).
	Flux bool
	// RealNode also runs a real node, containerd and a kubelet on this
	// machine, and a registry for its images; the demo then also rolls a
	// real package onto it (see realnode.go). It needs root and containerd.
	RealNode bool
	// RealNodes, when more than 0, runs that many real nodes on a network
	// of their own (at most nodenet.MaxNodes) and the operator installed
	// on them with the chart, with Prometheus, instead of in the
	// supervisor (see realnodes.go). It needs root and containerd.
	RealNodes int
	// VMNodes, when more than 0, also boots that many virtual machines
	// (at most nodenet.MaxNodes) as nodes with their own kernel, systemd
	// and disk, and rolls a package with a reboot across them (see
	// vmnodes.go). It needs root, qemu and mmdebstrap.
	VMNodes int
	// Namespace is the operator's: its Secret, policy ConfigMaps and stage
	// pods (DefaultNamespace when empty). NodeWright's end-to-end suite
	// looks in skyhook, its v0.18+ installs use nodewright.
	Namespace string
}

// DefaultNamespace is the operator's namespace unless Options say another.
const DefaultNamespace = "skyhook-system"

// namespace is the operator's namespace.
func (o Options) namespace() string {
	if o.Namespace == "" {
		return DefaultNamespace
	}
	return o.Namespace
}

// DefaultNodeLabels are the labels of sandbox nodes.
var DefaultNodeLabels = map[string]string{"skyhook.nvidia.com/test-node": "demo"}

// Files of the state directory.
const (
	supervisorPidFile = "supervisor.pid"
	readyFile         = "ready"
	logFile           = "sandbox.log"
	kubeconfigFile    = "kubeconfig"
	clusterDir        = "cluster"
	// metricsFile holds the URL of the operator's metrics endpoint.
	metricsFile = "metrics-url"
)

func (o Options) path(name string) string { return filepath.Join(o.StateDir, name) }

func (o *Options) complete() error {
	if o.StateDir == "" {
		return errors.New("--state-dir: must not be empty")
	}
	if o.Nodes < 0 {
		return fmt.Errorf("--nodes: must be 0 or more, got %d", o.Nodes)
	}
	if o.RealNodes < 0 || o.RealNodes > nodenet.MaxNodes {
		return fmt.Errorf("--real-nodes: must be 0 to %d (the nodes of one network), got %d", nodenet.MaxNodes, o.RealNodes)
	}
	if o.RealNodes > 0 && o.RealNode {
		return errors.New("--real-node and --real-nodes: choose one (--real-nodes 1 is one real node with the operator installed on it)")
	}
	if o.Out == nil {
		o.Out = io.Discard
	}
	if o.NodeLabels == nil {
		o.NodeLabels = DefaultNodeLabels
	}
	dir, err := filepath.Abs(o.StateDir)
	o.StateDir = dir
	return err
}

// Up starts the sandbox in the background and waits until its nodes are
// Ready. When it already runs, Up only says how to use it.
func Up(ctx context.Context, opts Options) error {
	if err := opts.complete(); err != nil {
		return err
	}
	if err := checkRealNodes(opts); err != nil {
		return err
	}
	if err := checkVMNodes(opts); err != nil {
		return err
	}
	// Build the binaries here, in the foreground, so the person sees the
	// one-time build instead of a silent wait.
	bin, err := binaries.Ensure(ctx, binaries.Options{Log: opts.Out})
	if err != nil {
		return err
	}
	if opts.Flux {
		if _, err := binaries.EnsureSourceController(ctx, binaries.Options{Log: opts.Out}); err != nil {
			return err
		}
	}
	if opts.RealNode {
		if err := prepareRealNode(ctx, opts); err != nil {
			return err
		}
	}
	if opts.RealNodes > 0 {
		if err := prepareRealNodes(ctx, opts); err != nil {
			return err
		}
	}
	if opts.VMNodes > 0 {
		if err := prepareVMNodes(ctx, opts); err != nil {
			return err
		}
	}
	if running(opts) {
		fmt.Fprintf(opts.Out, "The sandbox already runs in %s.\n", opts.StateDir)
		if _, ok := registryHost(opts); opts.RealNode && !ok {
			fmt.Fprintln(opts.Out, "It runs without a real node: stop it (down) and start it again with --real-node.")
		}
		printUsage(opts, bin.Kubectl)
		return nil
	}
	if err := cleanUp(opts); err != nil { // leftovers of a crashed supervisor
		return err
	}
	if err := os.MkdirAll(opts.StateDir, 0o755); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	log, err := os.OpenFile(opts.path(logFile), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.Command(self, "sandbox", "serve", "--state-dir", opts.StateDir, "--nodes", strconv.Itoa(opts.Nodes),
		"--flux="+strconv.FormatBool(opts.Flux), "--real-node="+strconv.FormatBool(opts.RealNode), "--real-nodes="+strconv.Itoa(opts.RealNodes), "--vm-nodes="+strconv.Itoa(opts.VMNodes), "--operator-namespace="+opts.namespace())
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the sandbox supervisor: %w", err)
	}
	if err := os.WriteFile(opts.path(supervisorPidFile), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"+self+"\n"), 0o644); err != nil {
		return err
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	realNode, operatorHow := "", "the operator"
	switch {
	case opts.RealNode:
		realNode = ", a real node (containerd and a kubelet)"
	case opts.RealNodes > 0:
		realNode = fmt.Sprintf(", %d real nodes on a network (containerd, a kubelet and kube-proxy each)", opts.RealNodes)
		operatorHow = "the operator installed on them with its Helm chart, and Prometheus"
	case opts.VMNodes > 0:
		realNode = fmt.Sprintf(", %d virtual machines as nodes (qemu, %s; a minute or more each to boot)", opts.VMNodes, accelName())
	}
	fmt.Fprintf(opts.Out, "Starting etcd, kube-apiserver, kube-controller-manager, kube-scheduler, KWOK with %d simulated nodes%s, and %s (log: %s)\n", opts.Nodes, realNode, operatorHow, opts.path(logFile))
	if err := waitReady(ctx, opts, exited); err != nil {
		return err
	}
	if opts.Demo {
		if err := demo(ctx, opts); err != nil {
			return err
		}
	}
	printUsage(opts, bin.Kubectl)
	return nil
}

// waitReady waits for the supervisor to report the cluster up, or to die.
func waitReady(ctx context.Context, opts Options, exited <-chan error) error {
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(10 * time.Minute)
	for {
		select {
		case err := <-exited:
			return fmt.Errorf("the sandbox supervisor exited (%v); the end of %s:\n%s", err, opts.path(logFile), proc.TailFile(opts.path(logFile), 20))
		case <-tick.C:
			if _, err := os.Stat(opts.path(readyFile)); err == nil {
				return nil
			}
		case <-timeout:
			return fmt.Errorf("the sandbox did not come up within 10 minutes; see %s", opts.path(logFile))
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Serve runs the cluster in the foreground until ctx ends or a component
// dies; it is the supervisor that Up starts.
func Serve(ctx context.Context, opts Options) error {
	if err := opts.complete(); err != nil {
		return err
	}
	_ = os.Remove(opts.path(readyFile))
	dir := opts.path(clusterDir)
	if err := os.RemoveAll(dir); err != nil { // every up starts from an empty cluster
		return err
	}
	crds, err := config.CRDs()
	if err != nil {
		return err
	}
	if opts.RealNodes > 0 {
		crds = nil // the chart installs them, as a release of its own
	}
	var sc *binaries.Controller
	if opts.Flux {
		if sc, err = binaries.EnsureSourceController(ctx, binaries.Options{Log: opts.Out}); err != nil {
			return err
		}
		flux, err := sc.CustomResourceDefinitions()
		if err != nil {
			return err
		}
		crds = append(crds, flux...)
	}
	_ = os.Remove(opts.path(registryFile))
	c, err := cluster.Start(ctx, cluster.Options{
		Dir:   dir,
		Nodes: simnode.Numbered("node", opts.Nodes, opts.NodeLabels),
		CRDs:  crds,
		Log:   opts.Out,
		// A user's own workloads (to see drains wait for them) need
		// placing; stage pods name their node.
		Scheduler:       true,
		RealNodeNetwork: opts.RealNodes > 0 || opts.VMNodes > 0,
	})
	if err != nil {
		return err
	}
	defer func() {
		c.Stop() // the real node too: its pods, their shims and mounts
		if opts.RealNode || opts.RealNodes > 0 || opts.VMNodes > 0 {
			removeRealDemoCopies()
			_ = os.Remove(opts.path(registryFile))
		}
	}()
	// Simulated hosts reboot for interrupt pods that ask for it, so a
	// Skyhook with reboot interrupts completes in the sandbox too.
	c.SimulateHosts(ctx, 2*time.Second)
	// Stage pods' containers get logs saying what would have run, so
	// `skyhook package logs` shows something here.
	c.SimulateContainerLogs(ctx)
	if sc != nil {
		stop, err := startFlux(ctx, c, sc, opts)
		if err != nil {
			return err
		}
		defer stop()
	}
	operatorDone, stopOperator, err := startOperator(ctx, c, opts)
	if err != nil {
		return err
	}
	defer stopOperator()
	kubeconfig, err := os.ReadFile(c.Kubeconfig)
	if err != nil {
		return err
	}
	if err := os.WriteFile(opts.path(kubeconfigFile), kubeconfig, 0o600); err != nil {
		return err
	}
	if err := os.WriteFile(opts.path(readyFile), []byte(c.Config.Host+"\n"), 0o644); err != nil {
		return err
	}
	if opts.RealNode {
		fmt.Fprintf(opts.Out, "sandbox up: %s, %d simulated nodes and the real node %s\n", c.Config.Host, opts.Nodes, RealNodeName)
	} else if opts.RealNodes > 0 {
		fmt.Fprintf(opts.Out, "sandbox up: %s, %d simulated nodes and the real nodes %v\n", c.Config.Host, opts.Nodes, opts.realNodes())
	} else if opts.VMNodes > 0 {
		fmt.Fprintf(opts.Out, "sandbox up: %s, %d simulated nodes and the virtual machines %v\n", c.Config.Host, opts.Nodes, opts.vmNodes())
	} else {
		fmt.Fprintf(opts.Out, "sandbox up: %s, %d nodes\n", c.Config.Host, opts.Nodes)
	}
	select {
	case <-ctx.Done():
		fmt.Fprintln(opts.Out, "stopping the sandbox")
	case name := <-c.Exited():
		err = fmt.Errorf("%s exited; see %s", name, filepath.Join(dir, "logs", name+".log"))
	case opErr := <-operatorDone:
		err = fmt.Errorf("the operator stopped: %v", opErr)
	}
	_ = os.Remove(opts.path(readyFile))
	return err
}

// startOperator runs the operator: installed with the chart on the real
// nodes (--real-nodes), else in the supervisor, its metrics on loopback
// (with --real-node, its stage pods' images from the real node's
// registry). done says when an operator in the supervisor stops (never
// for an installed one, whose pods the kubelets restart); stop ends what
// it started beside the cluster.
func startOperator(ctx context.Context, c *cluster.Cluster, opts Options) (done <-chan error, stop func(), err error) {
	if opts.RealNodes > 0 {
		stop, err := startRealNodes(ctx, c, opts)
		return nil, stop, err
	}
	metricsAddr, err := loopbackAddress()
	if err != nil {
		return nil, nil, err
	}
	stop = func() {}
	operatorOpts := operator.Options{Namespace: opts.namespace(), CertDir: opts.path("webhook-certs"), MetricsAddr: metricsAddr}
	if opts.RealNode || opts.VMNodes > 0 {
		start := startRealNode
		if opts.VMNodes > 0 {
			start = startVMNodes
		}
		images, stopNode, err := start(ctx, c, opts)
		if err != nil {
			return nil, nil, err
		}
		stop = stopNode
		// The simulated nodes run nothing, so the images matter only to
		// the real node, which pulls them from the registry.
		operatorOpts.AgentImage, operatorOpts.PauseImage = images.agent, images.pause
	}
	fmt.Fprintln(opts.Out, "starting the operator (admission webhooks)")
	if err := operator.EnsureNamespace(ctx, c.Config, opts.namespace()); err != nil {
		stop()
		return nil, nil, err
	}
	done, err = operator.StartLocal(ctx, c.Config, operatorOpts)
	if err != nil {
		stop()
		return nil, nil, fmt.Errorf("starting the operator: %w", err)
	}
	if err := os.WriteFile(opts.path(metricsFile), []byte("http://"+metricsAddr+"/metrics\n"), 0o644); err != nil {
		stop()
		return nil, nil, err
	}
	return done, stop, nil
}

// checkRealNodes refuses, before anything starts, real nodes this machine
// cannot run or whose leftovers the state directory holds.
func checkRealNodes(opts Options) error {
	names, flag := opts.realNodes(), "--real-nodes"
	if len(names) == 0 {
		return nil
	}
	if opts.RealNode {
		flag = "--real-node"
	}
	if err := kubeletnode.Supported(); err != nil {
		return fmt.Errorf("%s: %w", flag, err)
	}
	for _, name := range names {
		if err := kubeletnode.CheckDir(opts.path(clusterDir), name); err != nil {
			return fmt.Errorf("%s: %w (--state-dir)", flag, err)
		}
	}
	return nil
}

// loopbackAddress is a free port on 127.0.0.1, for the operator's metrics:
// the sandbox serves nothing beyond this machine.
func loopbackAddress() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// demo runs the demo rollout against the sandbox.
func demo(ctx context.Context, opts Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.path(kubeconfigFile))
	if err != nil {
		return err
	}
	c, err := client.New(cfg, client.Options{Scheme: scheme.New()})
	if err != nil {
		return err
	}
	if err := runDemo(ctx, c, opts.Out); err != nil {
		return err
	}
	if opts.RealNode || opts.RealNodes > 0 {
		return runRealDemo(ctx, c, opts)
	}
	if opts.VMNodes > 0 {
		return runVMDemo(ctx, c, opts)
	}
	return nil
}
