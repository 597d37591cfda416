// Package vmnode runs a node that is a machine of its own: a virtual
// machine under qemu booting Debian's kernel with systemd as PID 1,
// containerd and runc from Debian's packages and the kubelet the project
// builds, on a disk of its own. What a package does to such a node really
// happens: a reboot restarts the guest kernel (the node's boot ID
// changes), a service interrupt restarts a systemd unit, a step's writes
// land on that machine's disk and nowhere else.
//
// The machine joins the real nodes' network (package nodenet) through a
// tap device on its bridge, so it has an InternalIP like the namespaced
// real nodes (package kubeletnode) and reaches the apiserver and the
// image registries on this machine at the network's gateway.
//
// KVM is used where /dev/kvm exists; elsewhere qemu emulates the CPU
// (TCG), which is slower but needs nothing from the host.
package vmnode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/proc"
)

// LabelValue is the value of kubeletnode.Label on a virtual machine node.
const LabelValue = "vm"

// ErrUnsupported is returned when this machine cannot run a virtual
// machine node.
var ErrUnsupported = errors.New("a virtual machine node cannot run here")

// programs are what the harness runs on this machine (make vm-node-deps
// installs them: qemu-system-x86, qemu-utils, mmdebstrap, e2fsprogs).
var programs = []string{"qemu-system-x86_64", "qemu-img", "mmdebstrap", "mkfs.ext4"}

// Supported says why this machine cannot run a virtual machine node, or
// nil when it can.
func Supported() error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("%w: it needs root (tap devices, the image build), and this process runs as uid %d", ErrUnsupported, os.Geteuid())
	}
	for _, p := range programs {
		if _, err := exec.LookPath(p); err != nil {
			return fmt.Errorf("%w: %s is not installed (make vm-node-deps)", ErrUnsupported, p)
		}
	}
	_, err := debianSuite()
	return err
}

// KVM reports whether qemu can use hardware virtualization here: /dev/kvm
// opens and the CPU has Intel's or AMD's virtualization extensions. The
// second check is not redundant: a /dev/kvm served by a paravirtual
// module (kvm-pvm, found on machines of this project's kind, whose CPUs
// show neither extension) runs only guests built for it, and Debian's
// kernel hangs there before it prints a line.
func KVM() bool {
	f, err := os.OpenFile("/dev/kvm", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	cpuinfo, err := os.ReadFile("/proc/cpuinfo")
	return err == nil && hasVirtualizationFlag(string(cpuinfo))
}

// hasVirtualizationFlag reports whether a /proc/cpuinfo lists vmx
// (Intel VT-x) or svm (AMD-V) among a CPU's flags.
func hasVirtualizationFlag(cpuinfo string) bool {
	for _, line := range strings.Split(cpuinfo, "\n") {
		key, flags, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(key) != "flags" {
			continue
		}
		for _, f := range strings.Fields(flags) {
			if f == "vmx" || f == "svm" {
				return true
			}
		}
	}
	return false
}

// Options configure a virtual machine node.
type Options struct {
	// Name of the node; "vm-node" when empty.
	Name string
	// Labels of the node, besides kubeletnode.Label=LabelValue.
	Labels map[string]string
	// PauseImage is the pod sandbox image, in one of Registries.
	PauseImage string
	// Registries are image registries on this machine's loopback
	// ("127.0.0.1:PORT"); the guest pulls from them at the gateway.
	Registries []string
	// Network is the real nodes' network the machine joins; required.
	Network *nodenet.Network
	// MemoryMB is the guest's memory; 2048 when zero.
	MemoryMB int
	// CPUs is the guest's CPU count; when zero, 2 with KVM and 1
	// emulated.
	CPUs int
}

// Node is a virtual machine node.
type Node struct {
	Name string
	// Dir holds the machine's disks and its console log.
	Dir string
	// Address is the node's InternalIP on the network.
	Address netip.Addr
	// ConsoleLog is the guest's serial console, every boot appended.
	ConsoleLog string

	image      *Image
	opts       Options
	clusterDir string
	attachment *nodenet.Attachment
	qemu       *proc.Process
}

// Prepare checks that this machine can run the node and that opts are
// complete, and builds the node image into the cache of bin the first
// time (minutes). Start runs the machine.
func Prepare(ctx context.Context, clusterDir string, bin binaries.Options, opts Options, log io.Writer) (*Node, error) {
	if err := Supported(); err != nil {
		return nil, err
	}
	if opts.Name == "" {
		opts.Name = "vm-node"
	}
	if opts.Network == nil {
		return nil, errors.New("vmnode.Options.Network is required: the machine joins the real nodes' network")
	}
	if opts.PauseImage == "" {
		return nil, errors.New("vmnode.Options.PauseImage is required: the guest cannot pull the default pause image")
	}
	if opts.MemoryMB == 0 {
		opts.MemoryMB = 2048
	}
	if opts.CPUs == 0 {
		// Emulated, one virtual CPU: a guest of two on a loaded host of
		// two cores stalled for minutes (soft lockups of the kubelet and
		// iptables waiting on the other virtual CPU), and one is enough
		// for a node's daemons. With KVM, two.
		opts.CPUs = 1
		if KVM() {
			opts.CPUs = 2
		}
	}
	img, err := EnsureImage(ctx, bin, log)
	if err != nil {
		return nil, err
	}
	n := &Node{Name: opts.Name, Dir: filepath.Join(clusterDir, "nodes", opts.Name), clusterDir: clusterDir, opts: opts, image: img}
	n.ConsoleLog = filepath.Join(n.Dir, "console.log")
	return n, os.MkdirAll(n.Dir, 0o755)
}

// Start joins the machine to the network, makes its disks (a qcow2
// overlay of the image and the config disk) and boots it, and returns
// once its kubelet has registered the node (it need not be Ready yet).
// Whatever Start made, Stop removes, also when Start fails.
func (n *Node) Start(ctx context.Context, cp kubeletnode.ControlPlane, log io.Writer) error {
	var err error
	if n.attachment, err = n.opts.Network.AttachTap(n.Name); err != nil {
		return err
	}
	n.Address = n.attachment.Address
	s, err := n.seed(cp)
	if err != nil {
		return err
	}
	if err := makeConfigDisk(ctx, s, n.configDisk(), log); err != nil {
		return err
	}
	if err := run(ctx, log, "qemu-img", "create", "-q", "-f", "qcow2", "-F", "raw", "-b", n.image.Disk, n.rootDisk()); err != nil {
		return err
	}
	fmt.Fprintf(log, "booting the virtual machine %s (%s, %s) at %s\n", n.Name, n.Accel(), n.image.Dir, n.Address)
	if n.qemu, err = proc.Start(n.clusterDir, "qemu-"+n.Name, mustLookPath("qemu-system-x86_64"), n.qemuArgs()...); err != nil {
		return err
	}
	return n.waitRegistered(ctx, cp.Clientset)
}

// seed is the node's config disk: the registries and the apiserver are
// exposed at the gateway, where the guest reaches them.
func (n *Node) seed(cp kubeletnode.ControlPlane) (seed, error) {
	gw := n.attachment.Gateway.String()
	s := seed{node: n.Name, att: n.attachment, cp: cp, pause: n.opts.PauseImage, registries: map[string]string{}}
	labels := []string{kubeletnode.Label + "=" + LabelValue}
	for k, v := range n.opts.Labels {
		labels = append(labels, k+"="+v)
	}
	s.labels = strings.Join(labels, ",")
	var err error
	server := strings.TrimPrefix(cp.Server, "https://")
	if s.gateway, err = gatewayHostPort(server, gw); err != nil {
		return s, err
	}
	if err := n.opts.Network.ExposeLoopbackOnce(portOf(server)); err != nil {
		return s, err
	}
	for _, r := range n.opts.Registries {
		if s.registries[r], err = gatewayHostPort(r, gw); err != nil {
			return s, err
		}
		if err := n.opts.Network.ExposeLoopbackOnce(portOf(r)); err != nil {
			return s, err
		}
	}
	return s, nil
}

func portOf(hostPort string) int {
	i := strings.LastIndex(hostPort, ":")
	port, _ := strconv.Atoi(hostPort[i+1:])
	return port
}

func (n *Node) rootDisk() string   { return filepath.Join(n.Dir, "root.qcow2") }
func (n *Node) configDisk() string { return filepath.Join(n.Dir, "config.img") }

// Accel is how qemu runs the guest: "kvm" or "tcg" (emulated).
func (n *Node) Accel() string {
	if KVM() {
		return "kvm"
	}
	return "tcg"
}

// qemuArgs boot the image's kernel directly with the root on the first
// virtual disk and the config disk second, the console on a serial port
// logged to ConsoleLog (appended, so every boot is kept; the kernel is
// quiet there but for errors, since every byte on an emulated serial port
// costs the guest CPU, and systemd shows the units it starts), and the tap as
// the guest's eth0. A reboot in the guest resets the machine in the same
// qemu process, as a real machine's firmware would.
func (n *Node) qemuArgs() []string {
	accel, cpu := "tcg,thread=multi", "max"
	if n.Accel() == "kvm" {
		accel, cpu = "kvm", "host"
	}
	return []string{
		"-name", n.Name, "-nodefaults", "-no-user-config", "-display", "none",
		"-machine", "q35", "-accel", accel, "-cpu", cpu,
		"-smp", strconv.Itoa(n.opts.CPUs), "-m", strconv.Itoa(n.opts.MemoryMB),
		"-kernel", n.image.Kernel, "-initrd", n.image.Initrd,
		"-append", "root=/dev/vda rw console=ttyS0 quiet net.ifnames=0 systemd.show_status=1 panic=-1",
		"-drive", "file=" + n.rootDisk() + ",if=virtio,format=qcow2",
		"-drive", "file=" + n.configDisk() + ",if=virtio,format=raw,readonly=on",
		"-netdev", "tap,id=net0,ifname=" + n.attachment.Tap + ",script=no,downscript=no",
		"-device", "virtio-net-pci,netdev=net0,mac=" + n.mac(),
		"-object", "rng-random,filename=/dev/urandom,id=rng0", "-device", "virtio-rng-pci,rng=rng0",
		"-chardev", "file,id=console,path=" + n.ConsoleLog + ",append=on", "-serial", "chardev:console",
	}
}

// mac is a locally administered address from the node's IP, unique on
// the bridge.
func (n *Node) mac() string {
	a := n.Address.As4()
	return fmt.Sprintf("52:54:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3])
}

// waitRegistered waits for the kubelet to register the node. Under
// emulation a boot takes minutes.
func (n *Node) waitRegistered(ctx context.Context, cs kubernetes.Interface) error {
	err := n.qemu.WaitFor(ctx, 10*time.Minute, "the kubelet of the virtual machine "+n.Name+" to register it", func(ctx context.Context) (bool, error) {
		_, err := cs.CoreV1().Nodes().Get(ctx, n.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return fmt.Errorf("%w; the end of its console %s:\n%s", err, n.ConsoleLog, proc.TailFile(n.ConsoleLog, 30))
	}
	return nil
}

// PowerOff kills qemu, as pulling the plug would: nothing in the guest
// gets to finish or flush.
func (n *Node) PowerOff() {
	if n.qemu != nil {
		n.qemu.Kill()
	}
}

// PowerOn starts the machine again on the same disks after PowerOff.
func (n *Node) PowerOn() error {
	if n.qemu == nil {
		return errors.New("the machine was never started")
	}
	if done, _ := n.qemu.Exited(); !done {
		return fmt.Errorf("the machine %s is running", n.Name)
	}
	q, err := n.qemu.StartAgain()
	if err != nil {
		return err
	}
	n.qemu = q
	return nil
}

// Describe says whether qemu runs and where its own log is, for a
// failure's message.
func (n *Node) Describe() string {
	if n.qemu == nil {
		return "never started"
	}
	if done, err := n.qemu.Exited(); done {
		return fmt.Sprintf("exited (%v), its log %s", err, n.qemu.LogFile())
	}
	return fmt.Sprintf("running as pid %d, its log %s", n.qemu.Pid(), n.qemu.LogFile())
}

// Stop powers the machine off and takes it off the network; its disks go
// with the cluster's directory.
func (n *Node) Stop() {
	n.PowerOff()
	if n.attachment != nil {
		n.opts.Network.Detach(n.attachment)
		n.attachment = nil
	}
}

// CleanUp removes the disks of the machines under a cluster's directory
// (their overlays and config disks; the consoles stay, with the other
// logs) and returns what it removed: a sandbox that is down keeps no disk
// but the image in the cache.
func CleanUp(clusterDir string) []string {
	var done []string
	for _, pattern := range []string{"root.qcow2", "config.img"} {
		disks, _ := filepath.Glob(filepath.Join(clusterDir, "nodes", "*", pattern))
		for _, d := range disks {
			if os.Remove(d) == nil {
				done = append(done, d)
			}
		}
	}
	return done
}

func mustLookPath(name string) string {
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	return name
}
