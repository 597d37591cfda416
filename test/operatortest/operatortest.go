// Package operatortest runs the operator in a test process. It is apart
// from package testenv because it links the whole operator, webhooks
// included, and the webhooks' own tests use testenv.
package operatortest

import (
	"context"
	"fmt"

	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// Start runs the operator in the test process against the cluster until
// ctx ends, its log in <cluster dir>/logs/operator.log; it returns once the
// apiserver routes admission through its webhooks.
func Start(ctx context.Context, c *cluster.Cluster, opts operator.Options) error {
	_, err := start(ctx, c, opts)
	return err
}

// start is Start, returning what reports the operator's end.
func start(ctx context.Context, c *cluster.Cluster, opts operator.Options) (<-chan error, error) {
	if err := testenv.OperatorLogs(c); err != nil {
		return nil, err
	}
	if opts.Namespace == "" {
		opts.Namespace = operator.DefaultNamespace
	}
	if err := operator.EnsureNamespace(ctx, c.Config, opts.Namespace); err != nil {
		return nil, err
	}
	done, err := operator.StartLocal(ctx, c.Config, opts)
	if err != nil {
		return nil, fmt.Errorf("starting the operator: %w", err)
	}
	return done, nil
}
