package cluster

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
	children := childrenByParent()
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
			for _, d := range descendants(children, pid) {
				_ = syscall.Kill(d, syscall.SIGKILL)
			}
			if syscall.Kill(pid, syscall.SIGKILL) == nil {
				killed = append(killed, pid)
			}
		}
	}
	return killed
}

// childrenByParent maps each pid to its children's, from /proc/<pid>/stat.
func childrenByParent() map[int][]int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	children := map[int][]int{}
	for _, f := range stats {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// The parent's pid is the second field after the parenthesised
		// command name (which may hold spaces and parentheses).
		s := string(data)
		i := strings.LastIndexByte(s, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(s[i+1:])
		if len(fields) < 2 {
			continue
		}
		pid, err1 := strconv.Atoi(filepath.Base(filepath.Dir(f)))
		ppid, err2 := strconv.Atoi(fields[1])
		if err1 == nil && err2 == nil {
			children[ppid] = append(children[ppid], pid)
		}
	}
	return children
}

// Descendants lists the processes below pid, children before their own
// (a test checks that a pod's containers went with their shim).
func Descendants(pid int) []int { return descendants(childrenByParent(), pid) }

// ProcessesNaming lists the running processes, other than this one, whose
// command line contains any of words, as "pid: command line": what a
// test checks is gone after Stop or `sandbox down`.
func ProcessesNaming(words ...string) []string {
	cmdlines, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	self := strconv.Itoa(os.Getpid())
	var found []string
	for _, f := range cmdlines {
		pid := filepath.Base(filepath.Dir(f))
		data, err := os.ReadFile(f)
		if err != nil || pid == self {
			continue
		}
		line := strings.ReplaceAll(string(data), "\x00", " ")
		for _, w := range words {
			if strings.Contains(line, w) {
				found = append(found, pid+": "+line)
				break
			}
		}
	}
	return found
}

// descendants lists the processes below pid, children before their own.
func descendants(children map[int][]int, pid int) []int {
	var out []int
	for _, c := range children[pid] {
		out = append(out, c)
		out = append(out, descendants(children, c)...)
	}
	return out
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
