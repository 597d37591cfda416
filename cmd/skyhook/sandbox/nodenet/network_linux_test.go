package nodenet

import (
	"os"
	"os/exec"
	"strconv"
	"testing"

	"github.com/vishvananda/netlink"
)

// A bridge left by a process that died (its alias names a pid no longer
// running) is taken back by the next Create; Close removes what Create
// made.
func TestCreateTakesBackABridgeItsProcessLeft(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("creating bridges needs root")
	}
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	// The last name, so that networks other tests make meanwhile do not
	// meet it first.
	name := bridgePrefix + strconv.Itoa(MaxNetworks-1)
	stale := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: name}}
	if err := netlink.LinkAdd(stale); err != nil {
		t.Fatalf("making a stale bridge: %v", err)
	}
	t.Cleanup(func() {
		if l, err := netlink.LinkByName(name); err == nil {
			_ = netlink.LinkDel(l)
		}
	})
	if err := netlink.LinkSetAlias(stale, aliasPrefix+strconv.Itoa(dead.Process.Pid)); err != nil {
		t.Fatal(err)
	}

	nw, err := Create()
	if err != nil {
		t.Fatal(err)
	}
	if l, err := netlink.LinkByName(name); err == nil && l.Attrs().Alias != aliasPrefix+strconv.Itoa(os.Getpid()) {
		t.Errorf("%s is still there with alias %q: the dead process's bridge was not taken back", name, l.Attrs().Alias)
	}
	if mine, err := Bridges(); err != nil || len(mine) != 1 || mine[0] != nw.Bridge {
		t.Errorf("this process's bridges: %v, %v; want [%s]", mine, err, nw.Bridge)
	}
	nw.Close()
	if _, err := netlink.LinkByName(nw.Bridge); err == nil {
		t.Errorf("%s is still there after Close", nw.Bridge)
	}
}
