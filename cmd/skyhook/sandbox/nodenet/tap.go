package nodenet

import (
	"fmt"
	"net/netip"
	"strconv"

	"github.com/vishvananda/netlink"
)

// A virtual machine joins the network through a tap device on the bridge
// instead of a veth pair into a namespace: the machine's own kernel owns
// the other end (its eth0), so the harness cannot configure it from here.
// The machine sets its address and routes itself, from Attachment.Address
// and PeerRoutes, when it boots; this side gives it the tap and routes
// this machine and the namespaced nodes to its pods.

// Route is a route a node sets itself: to Dst through Via.
type Route struct {
	Dst netip.Prefix
	Via netip.Addr
}

// AttachTap gives the virtual machine node a place on the network: a
// persistent tap device (Attachment.Tap) on the bridge, for qemu to open
// by name, its address and pod range, and routes to its pods from this
// machine and from every namespaced node on the network. Detach removes
// the tap.
func (nw *Network) AttachTap(node string) (*Attachment, error) {
	nw.mu.Lock()
	defer nw.mu.Unlock()
	slot := nw.freeSlot()
	if slot < 0 {
		return nil, fmt.Errorf("network %s joins at most %d real nodes", nw.Bridge, MaxNodes)
	}
	a := &Attachment{Node: node, Address: nw.plan.Node(slot).Addr(), Pods: nw.plan.Pods(slot), NetworkPods: nw.plan.AllPods(),
		Gateway: nw.Gateway(), Bits: nw.plan.Gateway().Bits(),
		slot: slot, hostEnd: fmt.Sprintf("skh%dv%d", nw.plan.Network, slot)}
	a.Tap = a.hostEnd
	if err := nw.connectTap(a); err != nil {
		nw.disconnect(a)
		return nil, fmt.Errorf("joining %s to the network %s: %w", node, nw.Bridge, err)
	}
	nw.nodes = append(nw.nodes, a)
	return a, nil
}

// connectTap makes a's tap device on the bridge and the routes to its pods.
// The tap carries a virtio-net header (IFF_VNET_HDR) and no packet
// information (IFF_NO_PI), as qemu's tap backend opens it.
func (nw *Network) connectTap(a *Attachment) error {
	tap := &netlink.Tuntap{LinkAttrs: netlink.LinkAttrs{Name: a.hostEnd, MasterIndex: nw.bridge.Attrs().Index},
		Mode: netlink.TUNTAP_MODE_TAP, Flags: netlink.TUNTAP_NO_PI | netlink.TUNTAP_VNET_HDR}
	if err := addUp(tap, "the tap device "+a.hostEnd+" (root required)"); err != nil {
		return err
	}
	for _, other := range nw.nodes {
		if other.handle == nil {
			continue // another machine: it routes to every slot itself
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

// PeerRoutes are the routes a virtual machine on the network sets itself:
// to the pod range of every other slot of the network, through that
// slot's address, whether a node holds it yet or not, so nodes that join
// after the machine booted are reached without touching it.
func (a *Attachment) PeerRoutes() []Route {
	plan := Plan{Network: int(a.Address.As4()[2])}
	var out []Route
	for slot := range MaxNodes {
		if slot != a.slot {
			out = append(out, Route{Dst: plan.Pods(slot), Via: plan.Node(slot).Addr()})
		}
	}
	return out
}

// deleteTaps deletes the tap devices of network n's slots: persistent
// taps outlive the process that made them, and a bridge's deletion does
// not take them with it.
func deleteTaps(n string) {
	for slot := range MaxNodes {
		if link, err := netlink.LinkByName("skh" + n + "v" + strconv.Itoa(slot)); err == nil {
			_ = netlink.LinkDel(link)
		}
	}
}

// PlannedAttachment is the attachment slot would have on network n, for
// tests of what is made from one without a bridge.
func PlannedAttachment(n, slot int) *Attachment {
	p := Plan{Network: n}
	return &Attachment{Node: "test", Address: p.Node(slot).Addr(), Pods: p.Pods(slot), NetworkPods: p.AllPods(),
		Gateway: p.Gateway().Addr(), Bits: p.Gateway().Bits(), slot: slot}
}
