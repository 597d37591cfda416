package cluster

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// A start that lost a port race is retried from a clean state directory; any
// other error is returned at once.
func TestRetryPortClash(t *testing.T) {
	c := &Cluster{Dir: t.TempDir(), log: io.Discard}
	calls := 0
	err := c.retryPortClash(func() error {
		calls++
		if _, err := os.Stat(filepath.Join(c.Dir, "etcd")); err == nil {
			t.Errorf("attempt %d found the previous attempt's etcd directory", calls)
		}
		if err := os.MkdirAll(filepath.Join(c.Dir, "etcd"), 0o755); err != nil {
			return err
		}
		if calls < 3 {
			return errors.New("etcd exited; listen tcp 127.0.0.1:4001: bind: address already in use")
		}
		return nil
	}, "etcd")
	if err != nil || calls != 3 {
		t.Fatalf("err %v after %d calls; want success on the third", err, calls)
	}

	calls = 0
	other := errors.New("kube-apiserver exited: bad flag")
	if err := c.retryPortClash(func() error { calls++; return other }); !errors.Is(err, other) || calls != 1 {
		t.Fatalf("err %v after %d calls; want the error at once", err, calls)
	}
}
