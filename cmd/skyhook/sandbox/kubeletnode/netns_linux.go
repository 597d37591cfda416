package kubeletnode

import (
	"context"
	"fmt"
	"net"
	"os"
	"runtime"

	"golang.org/x/sys/unix"
)

// netns is a network namespace of the real node's own, holding only a
// loopback interface: the kubelet refuses a loopback node IP, and a node
// IP on the machine's own interfaces would let the cluster reach beyond
// loopback, so the kubelet and containerd run in here and talk to the
// control plane through forwarders (see forward.go).
//
// The namespace lives as long as its file descriptor or a process in it:
// nothing is left behind once Stop has closed it and stopped the processes.
// These few setns calls are all this needs of a namespace library.
type netns struct {
	fd   int // the namespace
	home int // this process's own namespace, to switch back to
}

// newNetns creates a network namespace with its loopback interface up.
func newNetns() (*netns, error) {
	home, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening this process's network namespace: %w", err)
	}
	ns := &netns{fd: -1, home: home}
	err = ns.onLockedThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("creating a network namespace (root required): %w", err)
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return err
		}
		ns.fd = fd
		return loopbackUp()
	})
	if err != nil {
		ns.close()
		return nil, err
	}
	return ns, nil
}

// onLockedThread runs fn on a thread that it then switches back to the
// home namespace. When switching back fails the thread stays locked, and
// Go ends it with the goroutine instead of reusing it in the wrong
// namespace.
func (ns *netns) onLockedThread(fn func() error) error {
	runtime.LockOSThread()
	err := fn()
	if restore := unix.Setns(ns.home, unix.CLONE_NEWNET); restore != nil {
		return fmt.Errorf("returning to the home network namespace: %w", restore)
	}
	runtime.UnlockOSThread()
	return err
}

// do runs fn inside the namespace. Sockets fn opens stay in it, and
// processes it starts are born in it (a child takes the namespace of the
// thread that forks it).
func (ns *netns) do(fn func() error) error {
	return ns.onLockedThread(func() error {
		if err := unix.Setns(ns.fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("entering the node's network namespace: %w", err)
		}
		return fn()
	})
}

// listen opens a TCP listener on addr inside the namespace.
func (ns *netns) listen(addr string) (net.Listener, error) {
	var l net.Listener
	err := ns.do(func() (err error) {
		l, err = net.Listen("tcp", addr)
		return err
	})
	return l, err
}

// dial connects to addr from inside the namespace.
func (ns *netns) dial(ctx context.Context, addr string) (net.Conn, error) {
	var c net.Conn
	err := ns.do(func() (err error) {
		c, err = (&net.Dialer{}).DialContext(ctx, "tcp", addr)
		return err
	})
	return c, err
}

func (ns *netns) close() {
	if ns.fd >= 0 {
		unix.Close(ns.fd)
	}
	unix.Close(ns.home)
}

// loopbackUp sets lo up in the calling thread's namespace (a new namespace
// has it down).
func loopbackUp() error {
	sock, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(sock)
	req, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(sock, unix.SIOCGIFFLAGS, req); err != nil {
		return fmt.Errorf("reading lo's flags: %w", err)
	}
	req.SetUint16(req.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(sock, unix.SIOCSIFFLAGS, req); err != nil {
		return fmt.Errorf("setting lo up: %w", err)
	}
	return nil
}

// isRoot reports whether this process may create namespaces and run a
// kubelet.
func isRoot() bool { return os.Geteuid() == 0 }
