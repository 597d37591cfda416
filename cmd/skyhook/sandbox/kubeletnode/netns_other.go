//go:build !linux

package kubeletnode

import (
	"context"
	"errors"
	"net"
)

// netns is Linux only: a real node needs Linux's namespaces and cgroups.
type netns struct{ fd int }

var errNotLinux = errors.New("a real node needs Linux")

func newNetns() (*netns, error)                               { return nil, errNotLinux }
func (*netns) do(func() error) error                          { return errNotLinux }
func (*netns) listen(string) (net.Listener, error)            { return nil, errNotLinux }
func (*netns) dial(context.Context, string) (net.Conn, error) { return nil, errNotLinux }
func (*netns) close()                                         {}
func isRoot() bool                                            { return false }
