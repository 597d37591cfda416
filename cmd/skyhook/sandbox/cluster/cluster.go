// Package cluster runs a real, local Kubernetes control plane for tests and
// the sandbox: etcd, kube-apiserver, kube-controller-manager and, when
// asked, kube-scheduler built from the Go module proxy (see package
// binaries), and KWOK simulating the nodes
// and what runs on them (see package simnode for the simulation contract).
// A real node, a kubelet and containerd, can join it (AddRealNode, package
// kubeletnode).
//
// Everything listens on 127.0.0.1. Each component is a child process
// (package proc). Stop ends every process it started; the children also
// die with this process if it is killed, so an interrupted or timed-out
// test leaves nothing running.
//
// Tests start one cluster per package from TestMain with test/clustertest.
//
// envtest is not used to start the processes: it cannot run the
// controller-manager or KWOK, cannot tie children to the parent's life
// (Pdeathsig), and cannot leave a cluster running detached for the sandbox.
// Its CRD installer is used.
package cluster

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// Options configure Start.
type Options struct {
	// Dir holds certificates, etcd data, logs and the kubeconfig. When empty
	// a temporary directory is used and removed by Stop.
	Dir string
	// Binaries says which versions to run and where they are cached.
	Binaries binaries.Options
	// Nodes are created, and waited for to be Ready, before Start returns.
	Nodes []simnode.Node
	// CRDs are installed before Start returns.
	CRDs []*apiextensionsv1.CustomResourceDefinition
	// Log receives progress messages; discarded when nil.
	Log io.Writer
	// Audit makes the apiserver log every mutating request (who, verb,
	// resource) to Cluster.AuditLog, for counting requests per client.
	Audit bool
	// APIServerArgs are extra kube-apiserver flags, after the harness's
	// own (a later flag wins), such as a short --min-request-timeout that
	// cuts watch streams often.
	APIServerArgs []string
	// Scale are settings for large fleets (KWOK shards and parallelism,
	// the heartbeat interval, control plane limits); see ScaleFor. The
	// zero value is the small cluster the tests use.
	Scale Scale
	// Scheduler starts kube-scheduler, which places pods that name no
	// node (a user's workloads, a Deployment's replicas) on the simulated
	// and real nodes. Stage pods name their node and need none; without
	// it other pods stay Pending.
	Scheduler bool
	// RealNodeNetwork joins the real nodes (AddRealNode) to a network of
	// their own (package nodenet, root), made before the apiserver starts:
	// each node has an address the apiserver reaches its kubelet at and
	// runs kube-proxy, pods on two real nodes reach each other, Services
	// and the apiserver (the kubernetes Service, at the network's gateway),
	// and the apiserver reaches pods by their IPs (a Service's endpoints,
	// as for webhooks). Without it each real node is alone on its loopback
	// and advertises 127.0.0.1.
	RealNodeNetwork bool
}

// Cluster is a running local control plane with simulated nodes.
type Cluster struct {
	// Dir is the cluster's state directory.
	Dir string
	// Kubeconfig is the path of an admin kubeconfig.
	Kubeconfig string
	// OperatorKubeconfig is an admin kubeconfig for the operator, as the
	// user OperatorUser (its requests can be told apart in the audit log).
	OperatorKubeconfig string
	// AuditLog is the apiserver's audit log (mutating requests, metadata
	// only) when Options.Audit is set.
	AuditLog string
	// Config is the admin's client configuration.
	Config *rest.Config
	// Clientset is a client for the built-in kinds.
	Clientset kubernetes.Interface
	// Binaries are the programs the cluster runs.
	Binaries *binaries.Set

	log io.Writer
	pki *pki
	// kubeletAddrs are where each KWOK shard serves the kubelet API of
	// its nodes (one address unless Scale.KWOKShards says more).
	kubeletAddrs []string
	scale        Scale
	// sourceStorage is where source-controller serves its artifacts, once
	// started.
	sourceStorage string
	audit         bool
	scheduler     bool
	apiServerArgs []string
	tempDir       bool
	procs         []*proc.Process
	// binaryOptions say where the cache is, for binaries built on demand
	// (the kubelet of a real node).
	binaryOptions binaries.Options
	// realNodesMu guards realNodes, which the simulators read while
	// AddRealNode appends.
	realNodesMu sync.Mutex
	realNodes   []*kubeletnode.Node
	// vmNodes are the virtual machine nodes (AddVMNode), guarded by
	// realNodesMu too.
	vmNodes []*vmnode.Node
	// network is the real nodes' network (Options.RealNodeNetwork); it
	// exposes the apiserver's port at its gateway.
	network *nodenet.Network
	// stopSimulators ends what the cluster simulates in this process
	// beside KWOK (simnode.Fleet.FinishDeletes).
	stopSimulators context.CancelFunc
	stopOnce       sync.Once
}

// Start builds (or takes from the cache) the binaries and starts etcd,
// kube-apiserver, kube-controller-manager and KWOK, then installs the CRDs
// and creates the nodes. On error everything started so far is stopped.
func Start(ctx context.Context, opts Options) (*Cluster, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Binaries.Log == nil {
		opts.Binaries.Log = opts.Log
	}
	bin, err := binaries.Ensure(ctx, opts.Binaries)
	if err != nil {
		return nil, err
	}
	c := &Cluster{Dir: opts.Dir, Binaries: bin, log: opts.Log, audit: opts.Audit, apiServerArgs: opts.APIServerArgs, binaryOptions: opts.Binaries, scale: opts.Scale, scheduler: opts.Scheduler}
	if c.Dir == "" {
		if c.Dir, err = os.MkdirTemp("", "skyhook-cluster-"); err != nil {
			return nil, err
		}
		c.tempDir = true
	}
	if c.Dir, err = filepath.Abs(c.Dir); err != nil {
		return nil, err
	}
	up := false
	defer func() {
		if !up {
			c.Stop()
		}
	}()
	if opts.RealNodeNetwork {
		if err := c.createRealNodeNetwork(); err != nil {
			return nil, err
		}
	}
	if err := c.retryPortClash(func() error { return c.startControlPlane(ctx) }, "etcd", "pki"); err != nil {
		return nil, err
	}
	if c.network != nil {
		if err = c.network.ExposeLoopbackOnce(c.apiserverPort()); err != nil {
			return nil, err
		}
	}
	if err := c.InstallCRDs(envtest.CRDInstallOptions{Paths: bin.KWOKCRDs, CRDs: opts.CRDs}); err != nil {
		return nil, err
	}
	if err := c.retryPortClash(func() error { return c.startKWOK(ctx) }); err != nil {
		return nil, err
	}
	// The kubelet's removal of a deleted pod, with its UID: not KWOK's.
	simulators, stopSimulators := context.WithCancel(context.Background())
	c.stopSimulators = stopSimulators
	c.fleet().FinishDeletes(simulators)
	if err := c.CreateNodes(ctx, opts.Nodes...); err != nil {
		return nil, err
	}
	up = true
	return c, nil
}

// startControlPlane starts etcd, the apiserver and the controller-manager
// and writes the admin kubeconfig.
func (c *Cluster) startControlPlane(ctx context.Context) error {
	certs, err := newPKI(filepath.Join(c.Dir, "pki"))
	if err != nil {
		return fmt.Errorf("creating certificates: %w", err)
	}
	c.pki = certs
	ports, err := proc.FreePorts(4)
	if err != nil {
		return err
	}
	etcdURL := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peerURL := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	fmt.Fprintln(c.log, "starting etcd")
	etcd, err := c.start("etcd", c.Binaries.Etcd, append([]string{
		"--data-dir=" + filepath.Join(c.Dir, "etcd"),
		"--listen-client-urls=" + etcdURL, "--advertise-client-urls=" + etcdURL,
		"--listen-peer-urls=" + peerURL, "--initial-advertise-peer-urls=" + peerURL,
		"--initial-cluster=default=" + peerURL,
		"--unsafe-no-fsync=true", "--log-level=warn"}, c.scale.etcdArgs()...)...)
	if err != nil {
		return err
	}
	if err := etcd.WaitHTTP(ctx, http.DefaultClient, etcdURL+"/health", 30*time.Second); err != nil {
		return err
	}

	fmt.Fprintln(c.log, "starting kube-apiserver")
	server := "https://127.0.0.1:" + strconv.Itoa(ports[2])
	auditFlags, err := c.auditFlags()
	if err != nil {
		return err
	}
	apiserverArgs := append(auditFlags,
		"--etcd-servers="+etcdURL,
		"--bind-address=127.0.0.1", "--advertise-address="+c.advertiseAddress(),
		"--secure-port="+strconv.Itoa(ports[2]),
		"--cert-dir="+filepath.Join(c.Dir, "pki"),
		"--tls-cert-file="+certs.ServingCertFile, "--tls-private-key-file="+certs.ServingKeyFile,
		"--client-ca-file="+certs.CAFile,
		// Pod logs go through the apiserver to KWOK's kubelet API on the
		// node's InternalIP (127.0.0.1), checked against the cluster's CA.
		"--kubelet-preferred-address-types=InternalIP",
		"--kubelet-certificate-authority="+certs.CAFile,
		"--kubelet-client-certificate="+certs.KubeletClientCertFile,
		"--kubelet-client-key="+certs.KubeletClientKeyFile,
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file="+certs.ServiceAccount,
		"--service-account-signing-key-file="+certs.ServiceAccountKey,
		"--service-cluster-ip-range=10.0.0.0/24",
		"--authorization-mode=RBAC",
		"--allow-privileged=true",
		"--profiling=false")
	if c.network != nil {
		// Webhooks reached through their Service's endpoints, as this
		// machine routes to pods but runs no kube-proxy itself.
		apiserverArgs = append(apiserverArgs, "--enable-aggregator-routing=true")
	}
	apiserverArgs = append(apiserverArgs, c.scale.apiServerArgs()...)
	apiserver, err := c.start("kube-apiserver", c.Binaries.KubeAPIServer, append(apiserverArgs, c.apiServerArgs...)...)
	if err != nil {
		return err
	}
	if err := c.writeKubeconfig(server, certs); err != nil {
		return err
	}
	hc, err := rest.HTTPClientFor(c.Config)
	if err != nil {
		return err
	}
	if err := apiserver.WaitHTTP(ctx, hc, server+"/readyz", 60*time.Second); err != nil {
		return err
	}

	fmt.Fprintln(c.log, "starting kube-controller-manager")
	kcm, err := c.start("kube-controller-manager", c.Binaries.KubeControllerManager, append([]string{
		"--kubeconfig=" + c.Kubeconfig,
		"--secure-port=0",
		"--leader-elect=false",
		"--use-service-account-credentials=false",
		"--service-account-private-key-file=" + certs.ServiceAccountKey,
		"--root-ca-file=" + certs.CAFile,
		"--cluster-signing-cert-file=" + certs.CAFile, "--cluster-signing-key-file=" + certs.CAKeyFile},
		// The client's default rate (20 QPS) makes lifting the not-ready
		// taint off thousands of new nodes take minutes: 200 QPS, more
		// for a large fleet. KWOK's heartbeats can lag by tens of seconds
		// with thousands of nodes on two cores; a simulated node goes
		// NotReady when a test says so (a reboot), not because the
		// simulator fell behind: a grace period of 5 min or more (see
		// Scale.nodeMonitorGracePeriod).
		c.scale.controllerManagerArgs()...)...)
	if err != nil {
		return err
	}
	// The service-account controller creating default/default shows the
	// controller-manager is connected and running its controllers.
	if err := kcm.WaitFor(ctx, 60*time.Second, "the controller-manager to create the default service account", func(ctx context.Context) (bool, error) {
		_, err := c.Clientset.CoreV1().ServiceAccounts("default").Get(ctx, "default", metav1.GetOptions{})
		return err == nil, ignoreNotFound(err)
	}); err != nil {
		return err
	}
	if !c.scheduler {
		return nil
	}
	return c.startScheduler(ctx, hc, certs, ports[3])
}

// startScheduler starts kube-scheduler on port and waits until it is
// healthy. It serves its health with the apiserver's certificate (made
// for 127.0.0.1 by the cluster's CA), so hc, the admin's client, checks it.
func (c *Cluster) startScheduler(ctx context.Context, hc *http.Client, certs *pki, port int) error {
	fmt.Fprintln(c.log, "starting kube-scheduler")
	scheduler, err := c.start("kube-scheduler", c.Binaries.KubeScheduler,
		"--kubeconfig="+c.Kubeconfig,
		"--authentication-kubeconfig="+c.Kubeconfig, "--authorization-kubeconfig="+c.Kubeconfig,
		"--leader-elect=false",
		"--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(port),
		"--tls-cert-file="+certs.ServingCertFile, "--tls-private-key-file="+certs.ServingKeyFile)
	if err != nil {
		return err
	}
	return scheduler.WaitHTTP(ctx, hc, "https://127.0.0.1:"+strconv.Itoa(port)+"/healthz", 60*time.Second)
}

// startKWOK loads the simulation stages and starts KWOK on every node: one
// process, or one per shard (Scale.KWOKShards).
func (c *Cluster) startKWOK(ctx context.Context) error {
	if err := c.ApplyStages(ctx, simnode.Stages(c.scale.HeartbeatInterval)); err != nil {
		return fmt.Errorf("loading the simulation stages: %w", err)
	}
	config, err := c.scale.kwokConfig(c.Dir)
	if err != nil {
		return err
	}
	shards := c.scale.shards()
	ports, err := proc.FreePorts(shards)
	if err != nil {
		return err
	}
	c.kubeletAddrs = nil
	var started []*proc.Process
	for i := range shards {
		name := shardName(i)
		fmt.Fprintln(c.log, "starting "+name)
		addr := "127.0.0.1:" + strconv.Itoa(ports[i])
		kwok, err := c.start(name, c.Binaries.KWOK, append([]string{
			"--kubeconfig=" + c.Kubeconfig,
			// Every node but a real one (see AddRealNode), whoever
			// created it; with shards, those of this shard.
			"--manage-nodes-with-label-selector=" + c.scale.shardSelector(i),
			// With leases, a restarted kwok ignores nodes until old
			// leases expire.
			"--node-lease-duration-seconds=0",
			"--enable-crds=Stage,Logs",
			// KWOK serves the kubelet API (TLS and plain HTTP on one
			// port) for its nodes: they advertise 127.0.0.1 and this
			// port, so the apiserver can proxy pod logs to it (see
			// ContainerLogs).
			"--server-address=" + addr,
			"--tls-cert-file=" + c.pki.KubeletCertFile, "--tls-private-key-file=" + c.pki.KubeletKeyFile,
			"--node-ip=127.0.0.1",
			"--node-port=" + strconv.Itoa(ports[i]),
			"--cidr=" + shardCIDR(i)}, config...)...)
		if err != nil {
			return err
		}
		c.kubeletAddrs = append(c.kubeletAddrs, addr)
		started = append(started, kwok)
	}
	for i, kwok := range started {
		if err := kwok.WaitHTTP(ctx, http.DefaultClient, "http://"+c.kubeletAddrs[i]+"/healthz", 30*time.Second); err != nil {
			return err
		}
	}
	return nil
}

// retryPortClash runs start again, up to three times, when a component lost
// the race for a port that proc.FreePorts had found free (another cluster of a
// parallel test package took it first). Before a retry it stops what start
// started and removes the state directories it wrote.
func (c *Cluster) retryPortClash(start func() error, stateDirs ...string) error {
	for attempt := 1; ; attempt++ {
		started := len(c.procs)
		err := start()
		if err == nil || attempt == 3 || !strings.Contains(err.Error(), "address already in use") {
			return err
		}
		fmt.Fprintf(c.log, "a port was taken meanwhile, starting again: %v\n", err)
		for i := len(c.procs) - 1; i >= started; i-- {
			c.procs[i].Stop(10 * time.Second)
		}
		c.procs = c.procs[:started]
		for _, d := range stateDirs {
			if err := os.RemoveAll(filepath.Join(c.Dir, d)); err != nil {
				return err
			}
		}
	}
}

func (c *Cluster) start(name, path string, args ...string) (*proc.Process, error) {
	p, err := proc.Start(c.Dir, name, path, args...)
	if err != nil {
		return nil, err
	}
	c.procs = append(c.procs, p)
	return p, nil
}

// Stop ends every process the cluster started, last started first, and
// removes a temporary state directory. It is safe to call more than once.
func (c *Cluster) Stop() {
	c.stopOnce.Do(func() {
		if c.stopSimulators != nil {
			c.stopSimulators()
		}
		for _, n := range c.RealNodes() {
			n.Stop()
		}
		for _, n := range c.VMNodes() {
			n.Stop()
		}
		if c.network != nil {
			c.network.Close() // after the nodes: each detached itself
		}
		for i := len(c.procs) - 1; i >= 0; i-- {
			c.procs[i].Stop(10 * time.Second)
		}
		if c.tempDir {
			_ = os.RemoveAll(c.Dir)
		}
	})
}

// Kubectl runs the kubectl built with the cluster's binaries against it and
// returns its combined output.
func (c *Cluster) Kubectl(args ...string) (string, error) {
	cmd := exec.Command(c.Binaries.Kubectl, append([]string{"--kubeconfig", c.Kubeconfig}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("kubectl %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// Processes lists the running components by name with their pids.
func (c *Cluster) Processes() map[string]int {
	running := map[string]int{}
	for _, p := range c.procs {
		if done, _ := p.Exited(); !done {
			running[p.Name()] = p.Pid()
		}
	}
	return running
}

// Exited returns a channel closed when any component process ends, with its
// name, so a supervisor can notice a crash.
func (c *Cluster) Exited() <-chan string {
	ch := make(chan string, len(c.procs))
	for _, p := range c.procs {
		go func() {
			<-p.Done()
			ch <- p.Name()
		}()
	}
	return ch
}

// InstallCRDs installs CustomResourceDefinitions (objects, or files and
// directories) and waits until they are served.
func (c *Cluster) InstallCRDs(opts envtest.CRDInstallOptions) error {
	opts.ErrorIfPathMissing = true
	if _, err := envtest.InstallCRDs(c.Config, opts); err != nil {
		return fmt.Errorf("installing CRDs: %w", err)
	}
	return nil
}

// auditFlags make the apiserver log mutating requests when asked to.
func (c *Cluster) auditFlags() ([]string, error) {
	if !c.audit {
		return nil, nil
	}
	policy := filepath.Join(c.Dir, "audit-policy.yaml")
	const rules = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
- level: None
`
	if err := os.WriteFile(policy, []byte(rules), 0o644); err != nil {
		return nil, err
	}
	c.AuditLog = filepath.Join(c.Dir, "logs", "audit.log")
	return []string{"--audit-policy-file=" + policy, "--audit-log-path=" + c.AuditLog, "--audit-log-format=json", "--audit-log-mode=blocking"}, nil
}

func (c *Cluster) writeKubeconfig(server string, certs *pki) error {
	kubeconfig := func(user string, cert, key []byte) *clientcmdapi.Config {
		cfg := clientcmdapi.NewConfig()
		cfg.Clusters["skyhook"] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: certs.caPEM}
		cfg.AuthInfos[user] = &clientcmdapi.AuthInfo{ClientCertificateData: cert, ClientKeyData: key}
		cfg.Contexts["skyhook"] = &clientcmdapi.Context{Cluster: "skyhook", AuthInfo: user}
		cfg.CurrentContext = "skyhook"
		return cfg
	}
	c.OperatorKubeconfig = filepath.Join(c.Dir, "operator.kubeconfig")
	if err := clientcmd.WriteToFile(*kubeconfig(OperatorUser, certs.operatorCertPEM, certs.operatorKeyPEM), c.OperatorKubeconfig); err != nil {
		return err
	}
	cfg := kubeconfig("skyhook-admin", certs.adminCertPEM, certs.adminKeyPEM)
	c.Kubeconfig = filepath.Join(c.Dir, "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, c.Kubeconfig); err != nil {
		return err
	}
	restConfig, err := clientcmd.NewDefaultClientConfig(*cfg, nil).ClientConfig()
	if err != nil {
		return err
	}
	// Tests and the sandbox create objects in bursts (nodes, pods); the
	// default client-side limit of 5 QPS would dominate their run time.
	restConfig.QPS, restConfig.Burst = 200, 400
	c.Config = restConfig
	c.Clientset, err = kubernetes.NewForConfig(restConfig)
	return err
}

func ignoreNotFound(err error) error {
	if apierrors.IsNotFound(err) {
		return nil
	}
	return err
}
