package main

import (
	"github.com/spf13/cobra"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/vmnode"
)

func newSandboxCommand() *cobra.Command {
	opts := sandbox.Options{StateDir: ".sandbox", Nodes: 10}
	cmd := &cobra.Command{
		Use:   "sandbox",
		Short: "Run a local control plane with simulated nodes",
		Long: `The sandbox is a real control plane on 127.0.0.1 (etcd, kube-apiserver,
kube-controller-manager and kube-scheduler, built once from the Go module proxy
and cached) with
nodes simulated by KWOK and the Skyhook CRDs installed; with up --real-node,
also a real node (containerd and a kubelet on this machine); with up
--real-nodes N, N real nodes on a network with the operator installed on
them by its Helm chart, and Prometheus scraping it.`,
	}
	cmd.PersistentFlags().StringVar(&opts.StateDir, "state-dir", opts.StateDir, "directory for the kubeconfig, logs and cluster data")

	up := &cobra.Command{
		Use:   "up",
		Short: "Start the sandbox in the background (does nothing if it runs)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return sandbox.Up(cmd.Context(), opts)
		},
	}
	up.Flags().IntVar(&opts.Nodes, "nodes", opts.Nodes, "number of simulated nodes")
	up.Flags().BoolVar(&opts.Demo, "demo", true, "roll out the demo Skyhook and show its progress")
	up.Flags().BoolVar(&opts.Flux, "flux", false, "also run Flux's source-controller, a Git server and an OCI registry (docs/gitops.md)")
	up.Flags().BoolVar(&opts.RealNode, "real-node", false, "also run a real node, containerd and a kubelet on this machine, and roll a real package onto it (root; make real-node-deps)")
	up.Flags().IntVar(&opts.VMNodes, "vm-nodes", 0, "also boot this many virtual machines (at most 4) as nodes with their own kernel, systemd and disk, and roll a package with a reboot across them (root; make vm-node-deps real-node-deps)")
	up.Flags().IntVar(&opts.RealNodes, "real-nodes", 0, "also run this many real nodes (at most 4) on a network of their own, install the operator on them with its Helm chart, with Prometheus scraping it, and roll a real package onto them (root; make real-node-deps)")
	up.Flags().StringVar(&opts.Namespace, "operator-namespace", sandbox.DefaultNamespace, "the operator's namespace: its stage pods, certificate Secret and policy ConfigMaps (NodeWright's end-to-end suite looks in skyhook, its v0.18+ installs use nodewright)")

	serve := &cobra.Command{
		Use:    "serve",
		Short:  "Run the sandbox in the foreground (what up starts)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			ctrl.SetLogger(zap.New(zap.WriteTo(cmd.OutOrStdout())))
			return sandbox.Serve(cmd.Context(), opts)
		},
	}
	serve.Flags().IntVar(&opts.Nodes, "nodes", opts.Nodes, "number of simulated nodes")
	serve.Flags().BoolVar(&opts.Flux, "flux", false, "also run Flux's source-controller, a Git server and an OCI registry")
	serve.Flags().BoolVar(&opts.RealNode, "real-node", false, "also run a real node (containerd and a kubelet) and a registry for its images")
	serve.Flags().IntVar(&opts.VMNodes, "vm-nodes", 0, "also boot this many virtual machines as nodes")
	serve.Flags().IntVar(&opts.RealNodes, "real-nodes", 0, "also run this many real nodes and the operator installed on them with its chart, and Prometheus")
	serve.Flags().StringVar(&opts.Namespace, "operator-namespace", sandbox.DefaultNamespace, "the operator's namespace")

	down := &cobra.Command{
		Use:   "down",
		Short: "Stop the sandbox and every process it started",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return sandbox.Down(opts)
		},
	}
	status := &cobra.Command{
		Use:   "status",
		Short: "Say what runs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			opts.Out = cmd.OutOrStdout()
			return sandbox.Status(cmd.Context(), opts)
		},
	}
	var flux, realNode, prometheus, vmNode bool
	prepare := &cobra.Command{
		Use:   "prepare",
		Short: "Build the control-plane binaries into the cache without starting anything",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			set, err := binaries.Ensure(cmd.Context(), binaries.Options{Log: cmd.OutOrStdout()})
			if err != nil {
				return err
			}
			cmd.Printf("Kubernetes %s, etcd %s and KWOK %s are in the cache:\n", set.Versions.Kubernetes, set.Versions.Etcd, set.Versions.KWOK)
			for _, path := range []string{set.KubeAPIServer, set.KubeControllerManager, set.Kubectl, set.Etcd, set.KWOK} {
				cmd.Printf("  %s\n", path)
			}
			if realNode {
				kubelet, err := binaries.EnsureKubelet(cmd.Context(), binaries.Options{Log: cmd.OutOrStdout()})
				if err != nil {
					return err
				}
				proxy, err := binaries.EnsureKubeProxy(cmd.Context(), binaries.Options{Log: cmd.OutOrStdout()})
				if err != nil {
					return err
				}
				cmd.Printf("The real node's kubelet and kube-proxy %s are in the cache:\n  %s\n  %s\n", binaries.KubeletVersion, kubelet, proxy)
				containerd, err := binaries.EnsureContainerd(cmd.Context(), binaries.Options{Log: cmd.OutOrStdout()})
				if err != nil {
					return err
				}
				cmd.Printf("containerd %s (image volumes, for the real-node tests) is in the cache:\n  %s\n", binaries.ContainerdVersion, containerd)
			}
			if vmNode {
				if err := prepareVMNode(cmd); err != nil {
					return err
				}
			}
			if prometheus {
				prom, err := binaries.EnsurePrometheus(cmd.Context(), binaries.Options{Log: cmd.OutOrStdout()})
				if err != nil {
					return err
				}
				cmd.Printf("Prometheus %s and promtool are in the cache:\n  %s\n  %s\n", prom.Version, prom.Server, prom.Promtool)
			}
			if !flux {
				return nil
			}
			return prepareFlux(cmd)
		},
	}
	prepare.Flags().BoolVar(&flux, "flux", false, "also build Flux's source-controller, kustomize-controller and flux CLI (for the GitOps end-to-end tests)")
	prepare.Flags().BoolVar(&realNode, "real-node", false, "also build the kubelet and kube-proxy of the real nodes (test/realnode, test/installed, sandbox up --real-node)")
	prepare.Flags().BoolVar(&vmNode, "vm-node", false, "also build the virtual machine nodes' disk image from Debian's packages (test/vmnode, sandbox up --vm-nodes); skipped, saying why, where they cannot run (root, make vm-node-deps)")
	prepare.Flags().BoolVar(&prometheus, "prometheus", false, "also build Prometheus and promtool (the alert rules' unit tests, test/installed)")
	cmd.AddCommand(up, serve, down, status, prepare)
	refuseDryRun(up, serve, down, prepare)
	return cmd
}

// prepareVMNode builds the virtual machine nodes' image into the cache,
// or says why this machine cannot run them.
func prepareVMNode(cmd *cobra.Command) error {
	if err := vmnode.Supported(); err != nil {
		cmd.Printf("not building the virtual machine node image: %v\n", err)
		return nil
	}
	img, err := vmnode.EnsureImage(cmd.Context(), binaries.Options{Log: cmd.OutOrStdout()}, cmd.OutOrStdout())
	if err != nil {
		return err
	}
	cmd.Printf("The virtual machine node image is in the cache:\n  %s\n", img.Dir)
	return nil
}

// prepareFlux builds what the GitOps tests run of Flux, so that their
// clocks do not include the builds.
func prepareFlux(cmd *cobra.Command) error {
	opts := binaries.Options{Log: cmd.OutOrStdout()}
	sc, err := binaries.EnsureSourceController(cmd.Context(), opts)
	if err != nil {
		return err
	}
	kc, err := binaries.EnsureKustomizeController(cmd.Context(), opts)
	if err != nil {
		return err
	}
	flux, err := binaries.EnsureFluxCLI(cmd.Context(), opts)
	if err != nil {
		return err
	}
	cmd.Printf("Flux source-controller %s, kustomize-controller %s and flux %s are in the cache:\n  %s\n  %s\n  %s\n",
		binaries.SourceControllerVersion, binaries.KustomizeControllerVersion, binaries.FluxCLIVersion, sc.Binary, kc.Binary, flux)
	return nil
}
