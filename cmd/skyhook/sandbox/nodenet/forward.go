package nodenet

import (
	"context"
	"io"
	"net"
	"sync"
)

// Forwarder copies TCP connections accepted on one side of a real node's
// network namespace to an address on the other side: the kubelet and
// containerd inside reach the apiserver and the image registries on the
// machine's loopback, the apiserver reaches a kubelet alone on its
// loopback (pod logs), and pods reach the apiserver at the network's
// gateway. Each is a listener and a dial function; Close ends both and
// every connection.
type Forwarder struct {
	listener net.Listener
	dial     func(ctx context.Context) (net.Conn, error)
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

// StartForwarder forwards the connections l accepts to what dial reaches.
func StartForwarder(l net.Listener, dial func(ctx context.Context) (net.Conn, error)) *Forwarder {
	ctx, cancel := context.WithCancel(context.Background())
	f := &Forwarder{listener: l, dial: dial, ctx: ctx, cancel: cancel}
	f.wg.Add(1)
	go f.serve()
	return f
}

// ForwardToMachine forwards the connections l accepts to addr in this
// process's own network namespace (the machine's), wherever l listens.
func ForwardToMachine(l net.Listener, addr string) *Forwarder {
	return StartForwarder(l, func(ctx context.Context) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "tcp", addr)
	})
}

func (f *Forwarder) serve() {
	defer f.wg.Done()
	for {
		in, err := f.listener.Accept()
		if err != nil {
			return // closed
		}
		f.wg.Add(1)
		go f.pipe(in)
	}
}

// pipe copies both ways until either side closes or the forwarder does.
func (f *Forwarder) pipe(in net.Conn) {
	defer f.wg.Done()
	defer in.Close()
	out, err := f.dial(f.ctx)
	if err != nil {
		return // the client sees the connection closed, as with nothing listening
	}
	defer out.Close()
	stop := context.AfterFunc(f.ctx, func() { in.Close(); out.Close() })
	defer stop()
	done := make(chan struct{}, 2)
	copyHalf := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		if tcp, ok := dst.(*net.TCPConn); ok {
			_ = tcp.CloseWrite()
		}
		done <- struct{}{}
	}
	go copyHalf(out, in)
	go copyHalf(in, out)
	<-done
	<-done
}

func (f *Forwarder) Close() {
	f.cancel()
	f.listener.Close()
	f.wg.Wait()
}
