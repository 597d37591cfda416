package cluster

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// Scale are the settings for large simulated fleets. The zero value is the
// cluster the tests and the sandbox have always run: one KWOK with its
// default parallelism, a heartbeat every 20–30 s per node, and the
// components' default limits. ScaleFor picks settings by fleet size.
type Scale struct {
	// KWOKShards is how many KWOK processes share the simulated nodes
	// (0 or 1: one). Shard i manages the nodes labelled
	// simnode.ShardLabel=i; shard 0 also manages simulated nodes without
	// the label (created other than through CreateNodes). Each shard
	// serves the kubelet API of its nodes on its own port, which its
	// nodes advertise, so pod logs travel through the apiserver for every
	// node.
	KWOKShards int
	// KWOKParallelism is each KWOK's number of workers playing node and
	// pod stages (its KwokConfiguration options nodePlayStageParallelism,
	// podPlayStageParallelism, podsOnNodeSyncParallelism and
	// nodeLeaseParallelism); KWOK's default when 0.
	KWOKParallelism int
	// HeartbeatInterval is about how often a simulated node refreshes
	// its heartbeat: each heartbeat comes after between 1 and 1.5 times
	// the interval. 0 keeps the default of 20–30 s. The
	// controller-manager's --node-monitor-grace-period is raised to
	// five intervals when that is more than its 5 min.
	HeartbeatInterval time.Duration
	// NodeMonitorGracePeriod, when set, is the controller-manager's
	// --node-monitor-grace-period instead of the one the heartbeat asks
	// for: a cluster whose nodes that matter are real kubelets (which
	// renew a Lease every 10 s) may see a dead machine NotReady in
	// Kubernetes' usual 50 s rather than 5 minutes.
	NodeMonitorGracePeriod time.Duration
	// LargeControlPlane raises the apiserver's in-flight limits, the
	// controller-manager's client rate and etcd's storage quota, and
	// takes etcd snapshots more often (less raft log kept in memory),
	// for fleets of thousands of nodes.
	LargeControlPlane bool
}

// NodesPerKWOKShard is how many nodes ScaleFor gives each KWOK process.
const NodesPerKWOKShard = 2500

// ScaleFor is the Scale used for a fleet of the given number of nodes: the
// zero Scale below 1,000 nodes; from 1,000, KWOK with 16 workers per kind
// of stage, a one-minute heartbeat and the large control plane settings;
// one KWOK shard per NodesPerKWOKShard nodes. From 5,000 nodes the
// heartbeat is every 2 minutes: at one minute 10,000 idle nodes kept 1.1
// of the machine's 2 cores busy with heartbeats alone. (A real kubelet
// reports node status every 5 minutes when nothing changes and proves
// itself alive with a Lease every 10 s; KWOK runs without leases here, so
// the status heartbeat is the liveness signal.)
func ScaleFor(nodes int) Scale {
	if nodes < 1000 {
		return Scale{}
	}
	heartbeat := time.Minute
	if nodes >= 5000 {
		heartbeat = 2 * time.Minute
	}
	return Scale{
		KWOKShards:        (nodes + NodesPerKWOKShard - 1) / NodesPerKWOKShard,
		KWOKParallelism:   16,
		HeartbeatInterval: heartbeat,
		LargeControlPlane: true,
	}
}

// String says what the settings are, for logs.
func (s Scale) String() string {
	hb := "20-30s (default)"
	if s.HeartbeatInterval > 0 {
		hb = s.HeartbeatInterval.String()
	}
	par := "default"
	if s.KWOKParallelism > 0 {
		par = strconv.Itoa(s.KWOKParallelism)
	}
	return fmt.Sprintf("KWOK shards %d, KWOK parallelism %s, heartbeat %s, node-monitor-grace-period %s, large control plane %t",
		s.shards(), par, hb, s.nodeMonitorGracePeriod(), s.LargeControlPlane)
}

func (s Scale) shards() int { return max(1, s.KWOKShards) }

// shardSelector is the label selector of the nodes shard i manages: never a
// real node; with several shards, the nodes labelled for it, and for shard
// 0 also the simulated nodes without a valid shard label.
func (s Scale) shardSelector(i int) string {
	// KWOK leaves alone the nodes a kubelet runs: the real nodes and the
	// virtual machines (it would otherwise play their pods too).
	sel := kubeletnode.Label + " notin (" + kubeletnode.LabelValue + "," + vmnode.LabelValue + ")"
	n := s.shards()
	if n == 1 {
		return sel
	}
	if i > 0 {
		return sel + "," + simnode.ShardLabel + "=" + strconv.Itoa(i)
	}
	others := make([]string, 0, n-1)
	for j := 1; j < n; j++ {
		others = append(others, strconv.Itoa(j))
	}
	return sel + "," + simnode.ShardLabel + " notin (" + strings.Join(others, ",") + ")"
}

// shardName is the process name of shard i: "kwok" for the first, so a
// one-shard cluster is named as it always was.
func shardName(i int) string {
	if i == 0 {
		return "kwok"
	}
	return "kwok-" + strconv.Itoa(i)
}

// shardCIDR is where shard i gives pods their IPs: 10.244.0.0/16 for the
// first, as always, and a /16 of its own for each other shard so that no
// two pods share an IP.
func shardCIDR(i int) string {
	if 244+i <= 255 {
		return fmt.Sprintf("10.%d.0.0/16", 244+i)
	}
	return fmt.Sprintf("10.%d.0.0/16", i%244)
}

// IsSimulator reports whether a component name (a key of Processes) is a
// KWOK process.
func IsSimulator(name string) bool {
	return name == "kwok" || strings.HasPrefix(name, "kwok-")
}

// nodeMonitorGracePeriod is how long the node lifecycle controller waits for
// a heartbeat before it marks a node unknown: NodeMonitorGracePeriod when
// set, else 5 min (KWOK's heartbeats can lag by tens of seconds with
// thousands of nodes on two cores), or five heartbeat intervals when that
// is longer.
func (s Scale) nodeMonitorGracePeriod() time.Duration {
	if s.NodeMonitorGracePeriod > 0 {
		return s.NodeMonitorGracePeriod
	}
	return max(5*time.Minute, 5*s.HeartbeatInterval)
}

// kwokConfig writes a KwokConfiguration with the parallelism and returns the
// flag that loads it, or nothing when KWOK's defaults stand. A
// configuration file replaces KWOK's defaulted options, so it turns the
// debugging handlers (the kubelet API's containerLogs) back on.
func (s Scale) kwokConfig(dir string) ([]string, error) {
	if s.KWOKParallelism <= 0 {
		return nil, nil
	}
	p := s.KWOKParallelism
	cfg := fmt.Sprintf(`apiVersion: config.kwok.x-k8s.io/v1alpha1
kind: KwokConfiguration
options:
  enableDebuggingHandlers: true
  nodePlayStageParallelism: %d
  podPlayStageParallelism: %d
  podsOnNodeSyncParallelism: %d
  nodeLeaseParallelism: %d
`, p, p, p, p)
	file := filepath.Join(dir, "kwok.yaml")
	if err := os.WriteFile(file, []byte(cfg), 0o644); err != nil {
		return nil, err
	}
	return []string{"--config=" + file}, nil
}

// etcdArgs are etcd's flags for a large fleet: an 8 GiB quota (the 2 GiB
// default fills between the apiserver's compactions with thousands of
// nodes heartbeating), and a snapshot every 10,000 entries instead of
// 100,000, which bounds the raft log etcd keeps in memory.
func (s Scale) etcdArgs() []string {
	if !s.LargeControlPlane {
		return nil
	}
	return []string{"--quota-backend-bytes=8589934592", "--snapshot-count=10000"}
}

// apiServerArgs raise the in-flight request limits (400 reads and 200
// writes by default), which thousands of nodes' heartbeats and KWOK's
// status patches reach in bursts. The watch cache needs no flag: its size
// follows the event rate since Kubernetes 1.19.
//
// They also turn off the TaintNodesByCondition admission plugin, which
// gives every new node the not-ready NoSchedule taint for the node
// lifecycle controller to lift once the node is Ready: its 8 workers (a
// fixed number) lift about 25 a second on two busy cores, so 10,000 new
// nodes took over 6 minutes to become schedulable. Without it a node is
// created untainted and KWOK makes it Ready; the controller still taints
// a node that goes NotReady (a simulated reboot) and lifts the taint
// when it is back.
func (s Scale) apiServerArgs() []string {
	if !s.LargeControlPlane {
		return nil
	}
	return []string{"--max-requests-inflight=1600", "--max-mutating-requests-inflight=800",
		"--disable-admission-plugins=TaintNodesByCondition"}
}

// controllerManagerArgs give the controller-manager's client more rate
// for a large fleet (the not-ready taints of thousands of new nodes) and
// the grace period that matches the heartbeat.
func (s Scale) controllerManagerArgs() []string {
	args := []string{"--node-monitor-grace-period=" + s.nodeMonitorGracePeriod().String()}
	if s.LargeControlPlane {
		args = append(args, "--kube-api-qps=500", "--kube-api-burst=1000")
	} else {
		args = append(args, "--kube-api-qps=200", "--kube-api-burst=400")
	}
	return args
}
