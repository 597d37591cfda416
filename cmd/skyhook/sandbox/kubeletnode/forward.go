package kubeletnode

import (
	"context"
	"io"
	"net"
	"sync"
)

// forwarder copies TCP connections accepted on one side of the real node's
// network namespace to the same address on the other side: the kubelet and
// containerd inside reach the apiserver and the image registries on the
// machine's loopback, and the apiserver reaches the kubelet (pod logs).
// Each is a listener and a dial function; Close ends both and every
// connection.
type forwarder struct {
	listener net.Listener
	dial     func(ctx context.Context) (net.Conn, error)
	ctx      context.Context
	cancel   context.CancelFunc
	wg       sync.WaitGroup
}

func startForwarder(l net.Listener, dial func(ctx context.Context) (net.Conn, error)) *forwarder {
	ctx, cancel := context.WithCancel(context.Background())
	f := &forwarder{listener: l, dial: dial, ctx: ctx, cancel: cancel}
	f.wg.Add(1)
	go f.serve()
	return f
}

func (f *forwarder) serve() {
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
func (f *forwarder) pipe(in net.Conn) {
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

func (f *forwarder) Close() {
	f.cancel()
	f.listener.Close()
	f.wg.Wait()
}
