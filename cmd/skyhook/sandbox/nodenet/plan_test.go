package nodenet

import (
	"net/netip"
	"slices"
	"testing"
)

// Every address and range of every network is its own: no node shares an
// address or a pod range with another node of any network, the bridge's
// subnet holds its nodes, and what a network claims from the machine's
// routing covers its pod ranges.
func TestPlansNeverShareAnAddressOrRange(t *testing.T) {
	addrs := map[netip.Addr]string{}
	var pods []netip.Prefix
	for n := range MaxNetworks {
		p := Plan{Network: n}
		if !slices.Contains(p.claimed(), p.AllPods()) {
			t.Errorf("network %d claims %v, not its pod ranges %s", n, p.claimed(), p.AllPods())
		}
		for i := range MaxNodes {
			node := p.Node(i)
			if !p.Gateway().Masked().Contains(node.Addr()) {
				t.Errorf("network %d node %d: %s is off the bridge's subnet %s", n, i, node, p.Gateway())
			}
			if other, taken := addrs[node.Addr()]; taken || node.Addr() == p.Gateway().Addr() {
				t.Errorf("network %d node %d: %s is also %s's", n, i, node.Addr(), other)
			}
			addrs[node.Addr()] = "a node"
			if !p.AllPods().Contains(p.Pods(i).Addr()) || p.Pods(i).Bits() < p.AllPods().Bits() {
				t.Errorf("network %d node %d: pods %s outside the claimed %s", n, i, p.Pods(i), p.AllPods())
			}
			for _, q := range pods {
				if q.Overlaps(p.Pods(i)) {
					t.Errorf("network %d node %d: pods %s overlap %s", n, i, p.Pods(i), q)
				}
			}
			pods = append(pods, p.Pods(i))
		}
	}
}

func TestOverlapsAny(t *testing.T) {
	routed := []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("10.214.4.0/24")}
	if overlapsAny(Plan{Network: 0}.claimed(), routed) {
		t.Error("network 0 overlaps routes it does not touch")
	}
	if !overlapsAny(Plan{Network: 1}.claimed(), routed) {
		t.Error("network 1's pod ranges (10.214.4.0/22) overlap 10.214.4.0/24, not seen")
	}
}
