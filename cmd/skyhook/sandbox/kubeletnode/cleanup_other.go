//go:build !linux

package kubeletnode

import (
	"context"
	"time"
)

// A real node needs Linux (see netns_other.go); nothing to clean up elsewhere.
func criReady(context.Context, string) bool    { return false }
func removePodSandboxes(string, time.Duration) {}
func killShims(string) []int                   { return nil }
func unmountUnder(string) int                  { return 0 }
