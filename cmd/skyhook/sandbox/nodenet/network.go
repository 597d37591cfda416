// Package nodenet joins the sandbox's real nodes to this machine and to
// each other, as a cluster's network would: a bridge on the machine, a
// veth pair per node whose inner end has an address of its own inside the
// node's network namespace, and routes between the nodes' pod ranges. A
// node then has an InternalIP the apiserver reaches its kubelet at, pods
// on two nodes reach each other by their IPs, and this machine (the
// apiserver) reaches a pod by its IP, as it reaches webhooks by endpoint.
//
// The addresses are private ones inside this machine and its namespaces
// (10.213.N.0/24 for the nodes of network N, 10.214.0.0/16 for their
// pods); nothing is routed out. Traffic between nodes crosses the bridge
// and is never forwarded by this machine (its ip_forward is left alone);
// each node forwards for its own pods, as the CNI bridge plugin sets up.
//
// The network is done with netlink (vishvananda/netlink, the library the
// CNI plugins use), not by running ip(8): errors come back typed, and the
// node's end is configured through a handle in its namespace without
// entering it.
package nodenet

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

const (
	// MaxNetworks is how many networks this machine holds at once (one per
	// cluster with real nodes).
	MaxNetworks = 64
	// MaxNodes is how many real nodes one network joins.
	MaxNodes = 4

	bridgePrefix = "skhbr"
	// aliasPrefix starts the bridge's alias, followed by the pid of the
	// process that created it: a bridge whose process is gone was left by
	// a harness that died without Close, and is taken back.
	aliasPrefix = "skyhook sandbox network of pid "
)

// Plan is where network n puts the bridge, node i and its pods.
type Plan struct{ Network int }

// Gateway is the bridge's address on this machine.
func (p Plan) Gateway() netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(p.Network), 1}), 24)
}

// Node is node i's address, on the bridge's subnet.
func (p Plan) Node(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 213, byte(p.Network), byte(2 + i)}), 24)
}

// Pods is node i's pod range.
func (p Plan) Pods(i int) netip.Prefix {
	return netip.PrefixFrom(netip.AddrFrom4([4]byte{10, 214, byte(p.Network*MaxNodes + i), 0}), 24)
}

// AllPods holds the pod ranges of all the network's nodes (MaxNodes
// ranges of /24).
func (p Plan) AllPods() netip.Prefix {
	return netip.PrefixFrom(p.Pods(0).Addr(), 22)
}

// claimed are the ranges network n takes from this machine's routing.
func (p Plan) claimed() []netip.Prefix {
	return []netip.Prefix{p.Gateway().Masked(), p.AllPods()}
}

// Network is a bridge on this machine and the nodes attached to it.
type Network struct {
	// Bridge is the bridge's interface name.
	Bridge string
	plan   Plan
	bridge netlink.Link

	mu    sync.Mutex
	nodes []*Attachment
	// exposed are the loopback ports ExposeLoopbackOnce made reachable
	// at the gateway, closed with the network.
	exposed map[int]*Forwarder
}

// Attachment is a node's place on the network.
type Attachment struct {
	// Node is the node's name.
	Node string
	// Address is the node's address (its InternalIP).
	Address netip.Addr
	// Pods is the node's pod range, for its CNI configuration.
	Pods netip.Prefix
	// NetworkPods holds the pod ranges of every node on the network (what
	// kube-proxy counts as the cluster's).
	NetworkPods netip.Prefix
	// Tap is the tap device of a virtual machine node (AttachTap), empty
	// for a node in a namespace.
	Tap string
	// Gateway is this machine's address on the network and Bits the
	// length of the network's prefix, for a machine that configures its
	// own interface.
	Gateway netip.Addr
	Bits    int

	slot    int
	hostEnd string
	handle  *netlink.Handle // in the node's namespace
}

// Create makes a network: the first free bridge name of MaxNetworks
// whose ranges this machine does not already route (a bridge left by a
// process that died is removed first). It needs root.
func Create() (*Network, error) {
	for n := range MaxNetworks {
		reclaimStale(bridgePrefix + strconv.Itoa(n))
	}
	routed, err := routedPrefixes()
	if err != nil {
		return nil, err
	}
	for n := range MaxNetworks {
		plan := Plan{Network: n}
		name := bridgePrefix + strconv.Itoa(n)
		if overlapsAny(plan.claimed(), routed) {
			continue
		}
		bridge := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
		if err := netlink.LinkAdd(bridge); err != nil {
			if errors.Is(err, syscall.EEXIST) {
				continue // another process's, or just claimed by one
			}
			return nil, fmt.Errorf("creating the bridge %s (root required): %w", name, err)
		}
		nw := &Network{Bridge: name, plan: plan}
		if err := nw.setUpBridge(); err != nil {
			_ = netlink.LinkDel(bridge)
			return nil, err
		}
		return nw, nil
	}
	return nil, fmt.Errorf("no free network: the %d bridges %s0… are taken or their ranges routed already", MaxNetworks, bridgePrefix)
}

// Gateway is this machine's address on the network: what the nodes and
// their pods reach this machine at.
func (nw *Network) Gateway() netip.Addr { return nw.plan.Gateway().Addr() }

// ExposeLoopback makes the service at 127.0.0.1:port on this machine
// reachable from the nodes and their pods at the gateway's address, same
// port, without making it reachable from outside the machine (the
// apiserver binds loopback only). Close the forwarder to end it.
func (nw *Network) ExposeLoopback(port int) (*Forwarder, error) {
	gateway := net.JoinHostPort(nw.Gateway().String(), strconv.Itoa(port))
	l, err := net.Listen("tcp", gateway)
	if err != nil {
		return nil, fmt.Errorf("exposing 127.0.0.1:%d at %s: %w", port, gateway, err)
	}
	return ForwardToMachine(l, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))), nil
}

// ExposeLoopbackOnce is ExposeLoopback for a port that several nodes
// reach (the apiserver's, a registry's): the first call exposes it, later
// ones find it exposed, and Close ends it.
func (nw *Network) ExposeLoopbackOnce(port int) error {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	if _, ok := nw.exposed[port]; ok {
		return nil
	}
	f, err := nw.ExposeLoopback(port)
	if err != nil {
		return err
	}
	if nw.exposed == nil {
		nw.exposed = map[int]*Forwarder{}
	}
	nw.exposed[port] = f
	return nil
}

// setUpBridge marks the new bridge as this process's, gives it its
// address and sets it up.
func (nw *Network) setUpBridge() error {
	link, err := netlink.LinkByName(nw.Bridge)
	if err != nil {
		return err
	}
	nw.bridge = link
	if err := netlink.LinkSetAlias(link, aliasPrefix+strconv.Itoa(os.Getpid())); err != nil {
		return fmt.Errorf("marking %s: %w", nw.Bridge, err)
	}
	if err := netlink.AddrAdd(link, &netlink.Addr{IPNet: ipNet(nw.plan.Gateway())}); err != nil {
		return fmt.Errorf("addressing %s: %w", nw.Bridge, err)
	}
	if err := netlink.LinkSetUp(link); err != nil {
		return fmt.Errorf("setting %s up: %w", nw.Bridge, err)
	}
	return nil
}

// reclaimStale deletes the bridge of that name, with its taps, if a
// process of this package made it and has died; it reports whether it did.
func reclaimStale(name string) bool {
	link, err := netlink.LinkByName(name)
	if err != nil {
		return false
	}
	pid, ok := strings.CutPrefix(link.Attrs().Alias, aliasPrefix)
	if !ok {
		return false // not ours, or just created and not yet marked
	}
	if n, err := strconv.Atoi(pid); err == nil && !proc.Alive(n) {
		_ = netlink.LinkDel(link)
		deleteTaps(strings.TrimPrefix(name, bridgePrefix))
		return true
	}
	return false
}

// ReclaimStale deletes the networks (bridge and taps) whose process died
// without closing them, as a killed sandbox supervisor leaves them; a new
// network reclaims its own name anyway. It returns the bridges deleted.
func ReclaimStale() []string {
	links, err := netlink.LinkList()
	if err != nil {
		return nil
	}
	var done []string
	for _, l := range links {
		if name := l.Attrs().Name; strings.HasPrefix(name, bridgePrefix) && reclaimStale(name) {
			done = append(done, name)
		}
	}
	return done
}

// Attach joins the node whose network namespace nsFD is to the network:
// a veth pair from the bridge to eth0 in the namespace, the node's address
// on it, and routes both ways between its pod range and every other
// node's, and from this machine to its pods. The namespace's own
// forwarding is the CNI bridge plugin's to turn on.
func (nw *Network) Attach(nsFD int, node string) (*Attachment, error) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	slot := nw.freeSlot()
	if slot < 0 {
		return nil, fmt.Errorf("network %s joins at most %d real nodes", nw.Bridge, MaxNodes)
	}
	a := &Attachment{Node: node, Address: nw.plan.Node(slot).Addr(), Pods: nw.plan.Pods(slot), NetworkPods: nw.plan.AllPods(),
		slot: slot, hostEnd: fmt.Sprintf("skh%dn%d", nw.plan.Network, slot)}
	if err := nw.connect(nsFD, a); err != nil {
		nw.disconnect(a)
		return nil, fmt.Errorf("joining %s to the network %s: %w", node, nw.Bridge, err)
	}
	nw.nodes = append(nw.nodes, a)
	return a, nil
}

// freeSlot is the lowest slot no attached node has, or -1.
func (nw *Network) freeSlot() int {
	for slot := range MaxNodes {
		if !slices.ContainsFunc(nw.nodes, func(a *Attachment) bool { return a.slot == slot }) {
			return slot
		}
	}
	return -1
}

// connect makes a's veth pair, address and routes.
func (nw *Network) connect(nsFD int, a *Attachment) error {
	veth := &netlink.Veth{LinkAttrs: netlink.LinkAttrs{Name: a.hostEnd, MasterIndex: nw.bridge.Attrs().Index},
		PeerName: "eth0", PeerNamespace: netlink.NsFd(nsFD)}
	if err := addUp(veth, "the veth pair "+a.hostEnd); err != nil {
		return err
	}
	var err error
	if a.handle, err = netlink.NewHandleAt(netns.NsHandle(nsFD)); err != nil {
		return fmt.Errorf("reaching the node's namespace: %w", err)
	}
	eth0, err := a.handle.LinkByName("eth0")
	if err != nil {
		return err
	}
	if err := a.handle.AddrAdd(eth0, &netlink.Addr{IPNet: ipNet(nw.plan.Node(a.slot))}); err != nil {
		return fmt.Errorf("addressing the node's eth0: %w", err)
	}
	if err := a.handle.LinkSetUp(eth0); err != nil {
		return err
	}
	for _, other := range nw.nodes {
		if err := a.handle.RouteAdd(route(other)); err != nil {
			return fmt.Errorf("routing to %s's pods: %w", other.Node, err)
		}
		if other.handle == nil {
			continue // a virtual machine: it routes to every slot itself
		}
		if err := other.handle.RouteAdd(route(a)); err != nil {
			return fmt.Errorf("routing from %s to the new node's pods: %w", other.Node, err)
		}
	}
	if err := netlink.RouteAdd(route(a)); err != nil {
		return fmt.Errorf("routing this machine to the node's pods: %w", err)
	}
	return nil
}

// Detach takes the node off the network: the routes to its pods and its
// veth pair go (the pair would also go with its namespace).
func (nw *Network) Detach(a *Attachment) {
	if a == nil {
		return
	}
	nw.mu.Lock()
	defer nw.mu.Unlock()
	nw.disconnect(a)
	nw.nodes = slices.DeleteFunc(nw.nodes, func(n *Attachment) bool { return n == a })
}

// disconnect undoes what connect did, as far as it got.
func (nw *Network) disconnect(a *Attachment) {
	for _, other := range nw.nodes {
		if other != a && other.handle != nil {
			_ = other.handle.RouteDel(route(a))
		}
	}
	_ = netlink.RouteDel(route(a))
	if link, err := netlink.LinkByName(a.hostEnd); err == nil {
		_ = netlink.LinkDel(link)
	}
	if a.handle != nil {
		a.handle.Close()
		a.handle = nil
	}
}

// Close detaches every node and deletes the bridge (and with it the
// bridge's address and routes).
func (nw *Network) Close() {
	nw.mu.Lock()
	nodes := append([]*Attachment(nil), nw.nodes...)
	nw.mu.Unlock()
	for _, a := range nodes {
		nw.Detach(a)
	}
	nw.mu.Lock()
	for _, f := range nw.exposed {
		f.Close()
	}
	nw.exposed = nil
	nw.mu.Unlock()
	if nw.bridge != nil {
		_ = netlink.LinkDel(nw.bridge)
	}
}

// route is the route to a's pods through a's address.
func route(a *Attachment) *netlink.Route {
	return &netlink.Route{Dst: ipNet(a.Pods), Gw: net.IP(a.Address.AsSlice())}
}

// routedPrefixes are the destinations and addresses this machine routes
// already; a network must not take any of them.
func routedPrefixes() ([]netip.Prefix, error) {
	routes, err := netlink.RouteList(nil, unix.AF_INET) // netlink.FAMILY_V4, which only Linux builds define
	if err != nil {
		return nil, fmt.Errorf("reading this machine's routes: %w", err)
	}
	var out []netip.Prefix
	for _, r := range routes {
		if r.Dst == nil {
			continue // the default route, as older kernels and netlink give it
		}
		if p, ok := prefixOf(r.Dst); ok && p.Bits() > 0 { // not 0.0.0.0/0, the default
			out = append(out, p)
		}
	}
	return out, nil
}

func overlapsAny(claimed, routed []netip.Prefix) bool {
	for _, c := range claimed {
		for _, r := range routed {
			if c.Overlaps(r) {
				return true
			}
		}
	}
	return false
}

func prefixOf(n *net.IPNet) (netip.Prefix, bool) {
	addr, ok := netip.AddrFromSlice(n.IP)
	if !ok {
		return netip.Prefix{}, false
	}
	ones, _ := n.Mask.Size()
	return netip.PrefixFrom(addr.Unmap(), ones).Masked(), true
}

func ipNet(p netip.Prefix) *net.IPNet {
	return &net.IPNet{IP: net.IP(p.Addr().AsSlice()), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

// Bridges are the bridges of networks this process made and has not
// closed.
func Bridges() ([]string, error) {
	links, err := netlink.LinkList()
	if err != nil {
		return nil, err
	}
	var names []string
	for _, l := range links {
		if l.Attrs().Alias == aliasPrefix+strconv.Itoa(os.Getpid()) {
			names = append(names, l.Attrs().Name)
		}
	}
	return names, nil
}

// addUp creates the link on this machine and brings it up; what names it
// in the error.
func addUp(link netlink.Link, what string) error {
	if err := netlink.LinkAdd(link); err != nil {
		return fmt.Errorf("creating %s: %w", what, err)
	}
	made, err := netlink.LinkByName(link.Attrs().Name)
	if err != nil {
		return err
	}
	return netlink.LinkSetUp(made)
}
