package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/cluster"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodenet"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/simnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

// With --vm-nodes N the supervisor also boots N virtual machines (package
// vmnode) on the real nodes' network, vm-1 … vm-N, each a node with its
// own kernel, systemd and disk, and serves the agent, pause and demo
// images from a registry on this machine. The operator runs in the
// supervisor. The VM demo then rolls a package whose interrupt is a
// reboot across them: each machine really reboots.

const (
	vmDemoSkyhook = "vm-demo"
	vmDemoPackage = "reboot-demo"
	vmDemoVersion = "1.0.0"
	vmDemoRepo    = "demo/" + vmDemoPackage
)

// vmNodes are the names of the machines the options ask for.
func (o Options) vmNodes() []string {
	names := make([]string, o.VMNodes)
	for i := range names {
		names[i] = fmt.Sprintf("vm-%d", i+1)
	}
	return names
}

// checkVMNodes refuses, before anything starts, what this machine cannot
// run or what does not go together.
func checkVMNodes(opts Options) error {
	if opts.VMNodes == 0 {
		return nil
	}
	if opts.VMNodes < 0 || opts.VMNodes > nodenet.MaxNodes {
		return fmt.Errorf("--vm-nodes: must be 0 to %d (the nodes of one network), got %d", nodenet.MaxNodes, opts.VMNodes)
	}
	if opts.RealNode || opts.RealNodes > 0 {
		return errors.New("--vm-nodes with --real-node or --real-nodes: choose one")
	}
	if err := vmnode.Supported(); err != nil {
		return fmt.Errorf("--vm-nodes: %w", err)
	}
	return nil
}

// prepareVMNodes builds in the foreground the node image (minutes, once
// per recipe, with the kubelet and kube-proxy it holds), busybox and the
// agent image.
func prepareVMNodes(ctx context.Context, opts Options) error {
	if _, err := vmnode.EnsureImage(ctx, binaries.Options{Log: opts.Out}, opts.Out); err != nil {
		return err
	}
	return prepareRealNode(ctx, opts)
}

// startVMNodes starts the registry with the images and boots the
// machines. The returned function stops the registry; Cluster.Stop powers
// the machines off.
func startVMNodes(ctx context.Context, c *cluster.Cluster, opts Options) (realNodeImages, func(), error) {
	imgs, reg, err := serveStageImages(ctx, opts, "the virtual machines'", vmDemoRepo+":"+vmDemoVersion, vmDemoImage)
	if err != nil {
		return imgs, nil, err
	}
	stop := func() { _ = reg.Close() }
	var machines []vmnode.Options
	for _, name := range opts.vmNodes() {
		machines = append(machines, vmnode.Options{Name: name, PauseImage: imgs.pause, Registries: []string{reg.Host()}})
	}
	if _, err := c.AddVMNodes(ctx, machines...); err != nil {
		stop()
		return imgs, nil, err
	}
	return imgs, stop, writeRegistryFile(opts, reg.Host())
}

// vmDemoImage is the VM demo's package: apply writes /etc/skyhook-demo
// with the boot it ran in, the interrupt reboots the machine, and
// post-interrupt writes the boot it ran in after.
func vmDemoImage(busybox string) (v1.Image, error) {
	step := nodeimages.Step
	spec, err := nodeimages.ShellPackage(busybox, vmDemoPackage, vmDemoVersion, map[string][]nodeimages.ShellStep{
		"apply":                {step("before", `mkdir -p /etc/skyhook-demo && echo "applied in boot $(cat /proc/sys/kernel/random/boot_id)" > /etc/skyhook-demo/before-reboot`)},
		"apply-check":          {step("before-written", `test -s /etc/skyhook-demo/before-reboot`)},
		"post-interrupt":       {step("after", `echo "post-interrupt in boot $(cat /proc/sys/kernel/random/boot_id)" > /etc/skyhook-demo/after-reboot`)},
		"post-interrupt-check": {step("after-written", `test -s /etc/skyhook-demo/after-reboot`)},
	})
	if err != nil {
		return nil, err
	}
	return nodeimages.Package(spec)
}

// runVMDemo rolls the reboot package across the machines, one at a time,
// showing progress, then each machine's boot IDs before and after.
func runVMDemo(ctx context.Context, c client.Client, opts Options) error {
	host, ok := registryHost(opts)
	if !ok {
		return fmt.Errorf("the supervisor did not say where the machines' registry is (%s)", opts.path(registryFile))
	}
	before := map[string]string{}
	for _, name := range opts.vmNodes() {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		before[name] = node.Status.NodeInfo.BootID
	}
	sk := &skyhookv1.Skyhook{
		ObjectMeta: metav1.ObjectMeta{Name: vmDemoSkyhook},
		Spec: skyhookv1.SkyhookSpec{
			NodeSelector:       metav1.LabelSelector{MatchLabels: map[string]string{kubeletnode.Label: vmnode.LabelValue}},
			InterruptionBudget: skyhookv1.InterruptionBudget{Count: ptrInt(1)},
			Packages: map[string]skyhookv1.Package{vmDemoPackage: {
				PackageRef: skyhookv1.PackageRef{Name: vmDemoPackage, Version: vmDemoVersion},
				Image:      host + "/" + vmDemoRepo,
				Interrupt:  &skyhookv1.Interrupt{Type: skyhookv1.InterruptReboot},
			}},
		},
	}
	if err := c.Create(ctx, sk); client.IgnoreAlreadyExists(err) != nil {
		return fmt.Errorf("applying the VM demo Skyhook: %w", err)
	}
	fmt.Fprintf(opts.Out, "\nRolling out the Skyhook %q on the virtual machines (%s, interrupt: reboot), one machine at a time: each really reboots\n", sk.Name, packageLine(sk))
	start := time.Now()
	if err := watchRollout(ctx, c, opts.Out, sk); err != nil {
		return err
	}
	fmt.Fprintf(opts.Out, "rolled out in %s\n", time.Since(start).Round(time.Second))
	for _, name := range opts.vmNodes() {
		node := &corev1.Node{}
		if err := c.Get(ctx, client.ObjectKey{Name: name}, node); err != nil {
			return err
		}
		fmt.Fprintf(opts.Out, "  %s: boot ID %s before, %s after\n", name, before[name], node.Status.NodeInfo.BootID)
	}
	return nil
}

func ptrInt(n int) *int { return &n }

// writeRegistryFile says where the nodes' registry is, for the demo and
// status.
func writeRegistryFile(opts Options, host string) error {
	return os.WriteFile(opts.path(registryFile), []byte(host+"\n"), 0o644)
}

// accelName says how qemu will run the machines here.
func accelName() string {
	if vmnode.KVM() {
		return "KVM"
	}
	return "emulated: this machine has no /dev/kvm"
}

// printVMNodes lists the virtual machine nodes, for status: address,
// readiness and boot ID (which changes at each reboot).
func printVMNodes(ctx context.Context, opts Options) error {
	cfg, err := clientcmd.BuildConfigFromFlags("", opts.path(kubeconfigFile))
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	nodes, err := cs.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: kubeletnode.Label + "=" + vmnode.LabelValue})
	if err != nil {
		return err
	}
	for i := range nodes.Items {
		n := &nodes.Items[i]
		address := ""
		for _, a := range n.Status.Addresses {
			if a.Type == corev1.NodeInternalIP {
				address = a.Address
			}
		}
		ready := "NotReady"
		if simnode.Ready(n) {
			ready = "Ready"
		}
		fmt.Fprintf(opts.Out, "virtual machine %-8s %s %s, boot ID %s\n", n.Name, address, ready, n.Status.NodeInfo.BootID)
	}
	return nil
}
