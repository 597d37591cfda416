package cluster_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
)

// Stop ends every process the cluster started and removes its temporary
// directory.
func TestStopEndsEveryProcess(t *testing.T) {
	c, err := cluster.Start(context.Background(), cluster.Options{Nodes: simnode.Numbered("stop", 2, nil)})
	if err != nil {
		t.Fatal(err)
	}
	procs := c.Processes()
	for _, name := range []string{"etcd", "kube-apiserver", "kube-controller-manager", "kwok"} {
		if procs[name] == 0 {
			t.Errorf("%s is not running; running: %v", name, procs)
		}
	}
	c.Stop()
	for name, pid := range procs {
		if proc.Alive(pid) {
			t.Errorf("%s (pid %d) still runs after Stop", name, pid)
		}
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("temporary directory %s left behind (%v)", c.Dir, err)
	}
}

// A program that dies without stopping its cluster (a test binary killed
// by a timeout, say) takes the cluster's processes with it.
func TestKilledOwnerTakesTheClusterWithIt(t *testing.T) {
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })

	var child childReport
	line, err := bufio.NewReader(out).ReadBytes('\n')
	if err != nil {
		t.Fatalf("the child did not report its cluster: %v", err)
	}
	if err := json.Unmarshal(line, &child); err != nil || len(child.Processes) != 4 {
		t.Fatalf("child reported %q (%v); want four processes", line, err)
	}
	procs := child.Processes
	t.Cleanup(func() { _ = os.RemoveAll(child.Dir) }) // the killed child could not

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	err = wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, 15*time.Second, true, func(context.Context) (bool, error) {
		for _, pid := range procs {
			if proc.Alive(pid) {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Fatalf("processes outlived their killed owner: %v", procs)
	}
}

const childEnv = "SKYHOOK_TEST_CLUSTER_CHILD"

type childReport struct {
	Dir       string
	Processes map[string]int
}

// runChild starts a cluster, prints its processes as JSON and waits to be
// killed.
func runChild() {
	c, err := cluster.Start(context.Background(), cluster.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	data, _ := json.Marshal(childReport{Dir: c.Dir, Processes: c.Processes()})
	fmt.Println(string(data))
	select {}
}
