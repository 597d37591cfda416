package binaries

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the heartbeat's goroutine.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A long build says it is still going, naming what and for how long, and
// says nothing once stopped.
func TestHeartbeatSaysTheBuildGoesOnUntilStopped(t *testing.T) {
	var log lockedBuffer
	stop := Heartbeat(&log, "kubernetes v1.36.3", 5*time.Millisecond)
	deadline := time.Now().Add(5 * time.Second)
	for strings.Count(log.String(), "\n") < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	stop()
	said := log.String()
	if strings.Count(said, "  still building kubernetes v1.36.3 (") < 2 || !strings.Contains(said, "so far)") {
		t.Fatalf("the heartbeat said %q", said)
	}
	time.Sleep(20 * time.Millisecond)
	if log.String() != said {
		t.Errorf("the heartbeat went on after stop: %q", strings.TrimPrefix(log.String(), said))
	}
}
