package kubeletnode

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// criClient connects to containerd's CRI service, the kubelet's own API
// to it (what crictl speaks).
func criClient(socket string) (runtimeapi.RuntimeServiceClient, func(), error) {
	conn, err := grpc.NewClient("unix://"+socket, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, nil, err
	}
	return runtimeapi.NewRuntimeServiceClient(conn), func() { conn.Close() }, nil
}

// criReady reports whether containerd answers on its CRI socket.
func criReady(ctx context.Context, socket string) bool {
	if _, err := os.Stat(socket); err != nil {
		return false
	}
	rs, done, err := criClient(socket)
	if err != nil {
		return false
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	_, err = rs.Version(ctx, &runtimeapi.VersionRequest{})
	return err == nil
}

// removePodSandboxes stops and removes every pod sandbox, which kills its
// containers and their shim: stopping containerd alone would leave them
// running. Errors are ignored: this is cleanup, and killShims follows.
func removePodSandboxes(socket string, timeout time.Duration) {
	rs, done, err := criClient(socket)
	if err != nil {
		return
	}
	defer done()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	list, err := rs.ListPodSandbox(ctx, &runtimeapi.ListPodSandboxRequest{})
	if err != nil {
		return
	}
	for _, sb := range list.Items {
		_, _ = rs.StopPodSandbox(ctx, &runtimeapi.StopPodSandboxRequest{PodSandboxId: sb.Id})
		_, _ = rs.RemovePodSandbox(ctx, &runtimeapi.RemovePodSandboxRequest{PodSandboxId: sb.Id})
	}
}

// killShims kills the containerd shims started for the containerd on
// socket, should any have survived it, and their containers: a shim is
// told containerd's address on its command line, and every process of its
// containers is its descendant (it is their subreaper), where killing the
// shim alone would leave them to init. It returns the shims' pids.
func killShims(socket string) []int {
	var killed []int
	tree := proc.ReadTree()
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range procs {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		args := strings.Split(string(data), "\x00")
		if !strings.HasPrefix(filepath.Base(args[0]), "containerd-shim") {
			continue
		}
		for i, a := range args {
			if a != "-address" || i+1 >= len(args) || args[i+1] != socket {
				continue
			}
			pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			if err != nil {
				continue
			}
			for _, d := range tree.Descendants(pid) {
				_ = syscall.Kill(d, syscall.SIGKILL)
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, pid)
			}
		}
	}
	return killed
}

// unmountUnder detaches every mount below dir, deepest first: the
// kubelet's volumes and containerd's root filesystems and shm mounts,
// which would otherwise keep the directory from being removed. It returns
// how many it detached.
func unmountUnder(dir string) int {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	var points []string
	s := bufio.NewScanner(f)
	s.Buffer(make([]byte, 64<<10), 1<<20)
	for s.Scan() {
		fields := strings.Fields(s.Text())
		if len(fields) < 5 {
			continue
		}
		point := unescapeMountPath(fields[4])
		if point == dir || strings.HasPrefix(point, dir+"/") {
			points = append(points, point)
		}
	}
	sort.Slice(points, func(i, j int) bool { return len(points[i]) > len(points[j]) })
	n := 0
	for _, p := range points {
		if syscall.Unmount(p, syscall.MNT_DETACH) == nil {
			n++
		}
	}
	return n
}

// unescapeMountPath undoes mountinfo's octal escapes (\040 for a space).
func unescapeMountPath(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
