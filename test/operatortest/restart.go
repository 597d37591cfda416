package operatortest

import (
	"context"
	"fmt"
	"testing"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
)

// Operator is an operator run in the test process that a test may restart
// with options of its own (a flag such as --reapply-on-reboot is the whole
// operator's, not a rollout's).
type Operator struct {
	parent context.Context
	c      *cluster.Cluster
	opts   operator.Options
	stop   context.CancelFunc
	done   <-chan error
}

// StartRestartable runs the operator as Start does, until ctx ends or the
// returned Operator is restarted.
func StartRestartable(ctx context.Context, c *cluster.Cluster, opts operator.Options) (*Operator, error) {
	o := &Operator{parent: ctx, c: c, opts: opts}
	return o, o.start(opts)
}

func (o *Operator) start(opts operator.Options) error {
	ctx, cancel := context.WithCancel(o.parent)
	done, err := start(ctx, o.c, opts)
	if err != nil {
		cancel()
		return err
	}
	o.stop, o.done = cancel, done
	return nil
}

// With restarts the operator with its options changed by tweak for the rest
// of the test, and as it was once the test ends.
func (o *Operator) With(t testing.TB, tweak func(*operator.Options)) {
	t.Helper()
	opts := o.opts
	tweak(&opts)
	if err := o.restart(opts); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := o.restart(o.opts); err != nil {
			t.Errorf("restarting the operator as it was: %v", err)
		}
	})
}

func (o *Operator) restart(opts operator.Options) error {
	o.stop()
	<-o.done
	if err := o.start(opts); err != nil {
		return fmt.Errorf("restarting the operator: %w", err)
	}
	return nil
}

// Without stops the operator for the rest of the test (another runs in its
// place, installed in the cluster) and starts it again, as it was, once
// the test ends.
func (o *Operator) Without(t testing.TB) {
	t.Helper()
	o.stop()
	<-o.done
	t.Cleanup(func() {
		if err := o.start(o.opts); err != nil {
			t.Errorf("starting the operator again: %v", err)
		}
	})
}
