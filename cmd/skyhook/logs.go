package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// logsOptions are the flags of `package logs`.
type logsOptions struct {
	node, skyhook, stage, container string
	follow                          bool
}

// newLogsCommand shows what a package's stage pod on a node printed: the
// copy container's and the agent's lines, read through the apiserver as
// `kubectl logs` reads them.
func newLogsCommand() *cobra.Command {
	var o logsOptions
	cmd := &cobra.Command{
		Use:   "logs <package> --node N [--skyhook S] [--stage STAGE] [-c CONTAINER] [-f]",
		Short: "The logs of a package's stage pod on a node (the newest, or of one stage)",
		Long: `Prints the logs of the package's newest stage pod on the node, container by
container (copy, the stage, its check), or of one container with -c. With -f
it follows the running container and the ones after it until the pod ends.

The operator deletes a stage pod once its stage succeeded; a failed pod is
kept. The agent also writes its logs on the node under /var/log/skyhook.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.node == "" {
				return fmt.Errorf("--node: required")
			}
			if o.stage != "" && !validStage(o.stage) {
				return fmt.Errorf("--stage %q: want apply, config, upgrade, interrupt, post-interrupt or uninstall", o.stage)
			}
			cfg, err := kubeFlags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("reading the kubeconfig: %w", err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			pod, err := newestStagePod(cmd.Context(), cs, args[0], o)
			if err != nil {
				return err
			}
			return printStagePodLogs(cmd.Context(), cs, cmd.OutOrStdout(), pod, o)
		},
	}
	cmd.Flags().StringVar(&o.node, "node", "", "the node")
	cmd.Flags().StringVar(&o.skyhook, "skyhook", "", "the Skyhook of the package (needed when several Skyhooks have a package of that name)")
	cmd.Flags().StringVar(&o.stage, "stage", "", "the pod of this stage (apply, config, upgrade, interrupt, post-interrupt, uninstall) instead of the newest")
	cmd.Flags().StringVarP(&o.container, "container", "c", "", "only this container (copy, the stage's name, or <stage>-check)")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the logs while the pod runs")
	return cmd
}

func validStage(s string) bool {
	return slices.Contains([]skyhookv1.Stage{skyhookv1.StageApply, skyhookv1.StageConfig, skyhookv1.StageUpgrade,
		skyhookv1.StageInterrupt, skyhookv1.StagePostInterrupt, skyhookv1.StageUninstall}, skyhookv1.Stage(s))
}

// newestStagePod finds the package's stage pods on the node (in any
// namespace: they live in the operator's) and returns the newest.
func newestStagePod(ctx context.Context, cs kubernetes.Interface, pkg string, o logsOptions) (*corev1.Pod, error) {
	selector := labels.Set{stagepod.PackageLabel: pkg}
	if o.skyhook != "" {
		selector[stagepod.SkyhookLabel] = o.skyhook
	}
	if o.stage != "" {
		selector[stagepod.StageLabel] = o.stage
	}
	list, err := cs.CoreV1().Pods("").List(ctx, metav1.ListOptions{
		LabelSelector: selector.String(),
		FieldSelector: fields.OneTermEqualSelector("spec.nodeName", o.node).String(),
	})
	if err != nil {
		return nil, fmt.Errorf("listing the stage pods: %w", err)
	}
	pods := list.Items
	if len(pods) == 0 {
		what := "package " + pkg
		if o.stage != "" {
			what += " in stage " + o.stage
		}
		return nil, fmt.Errorf("no stage pod of %s on node %s: the operator deletes a stage pod once its stage succeeds "+
			"(see `skyhook package status %s`); the agent's own logs stay on the node under /var/log/skyhook/<skyhook>/%s/", what, o.node, pkg, pkg)
	}
	if owners := skyhooksOf(pods); len(owners) > 1 {
		return nil, fmt.Errorf("package %s on node %s belongs to several Skyhooks (%s): choose one with --skyhook", pkg, o.node, strings.Join(owners, ", "))
	}
	sort.SliceStable(pods, func(i, j int) bool { return newer(&pods[i], &pods[j]) })
	return &pods[0], nil
}

func skyhooksOf(pods []corev1.Pod) []string {
	var names []string
	for _, p := range pods {
		if name := p.Labels[stagepod.SkyhookLabel]; !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	sort.Strings(names)
	return names
}

// newer orders stage pods newest first: by creation, then by try (two tries
// can be created within the same second).
func newer(a, b *corev1.Pod) bool {
	if !a.CreationTimestamp.Equal(&b.CreationTimestamp) {
		return b.CreationTimestamp.Before(&a.CreationTimestamp)
	}
	ta, _ := strconv.Atoi(a.Annotations[stagepod.AttemptAnnotation])
	tb, _ := strconv.Atoi(b.Annotations[stagepod.AttemptAnnotation])
	return ta > tb
}

// printStagePodLogs prints the containers' logs in the order they run, each
// under a header; with -c, that container's alone and without header.
func printStagePodLogs(ctx context.Context, cs kubernetes.Interface, out io.Writer, pod *corev1.Pod, o logsOptions) error {
	names := containerNames(pod)
	if o.container != "" {
		if !slices.Contains(names, o.container) {
			return fmt.Errorf("-c %s: pod %s/%s has the containers %s", o.container, pod.Namespace, pod.Name, strings.Join(names, ", "))
		}
		names = []string{o.container}
	}
	for _, name := range names {
		var err error
		if pod, err = waitStarted(ctx, cs, pod, name, o.follow); err != nil || ctx.Err() != nil {
			return err // interrupted while following: done, not an error
		}
		state := containerState(pod, name)
		if o.container == "" {
			fmt.Fprintf(out, "==> %s/%s %s: %s <==\n", pod.Namespace, pod.Name, name, describeState(state))
		}
		if state.Running == nil && state.Terminated == nil {
			continue // nothing printed yet; describeState said why
		}
		// A finished container's log is complete: following it would wait
		// on a kubelet that may not end the stream (KWOK's does not).
		follow := o.follow && state.Running != nil
		if err := copyLogs(ctx, cs, out, pod, name, follow); err != nil {
			return err
		}
	}
	return nil
}

// containerNames are the pod's containers in the order they run.
func containerNames(pod *corev1.Pod) []string {
	var names []string
	for _, c := range append(slices.Clone(pod.Spec.InitContainers), pod.Spec.Containers...) {
		if c.Name != "pause" { // the stage pod's placeholder prints nothing
			names = append(names, c.Name)
		}
	}
	return names
}

func containerState(pod *corev1.Pod, name string) corev1.ContainerState {
	for _, s := range append(slices.Clone(pod.Status.InitContainerStatuses), pod.Status.ContainerStatuses...) {
		if s.Name == name {
			return s.State
		}
	}
	return corev1.ContainerState{}
}

func describeState(s corev1.ContainerState) string {
	switch {
	case s.Terminated != nil:
		return fmt.Sprintf("exited %d", s.Terminated.ExitCode)
	case s.Running != nil:
		return "running"
	case s.Waiting != nil && s.Waiting.Message != "":
		return fmt.Sprintf("waiting (%s: %s)", s.Waiting.Reason, s.Waiting.Message)
	case s.Waiting != nil && s.Waiting.Reason != "":
		return fmt.Sprintf("waiting (%s)", s.Waiting.Reason)
	default:
		return "not started"
	}
}

// waitStarted returns the pod as it is now; when following, it first waits
// until the container started, or can no longer start (the pod ended, or a
// container before it failed).
func waitStarted(ctx context.Context, cs kubernetes.Interface, pod *corev1.Pod, name string, follow bool) (*corev1.Pod, error) {
	current := pod
	check := func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(pod.Namespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return false, fmt.Errorf("stage pod %s/%s was deleted (its stage finished)", pod.Namespace, pod.Name)
		}
		if err != nil {
			return false, err
		}
		current = p
		s := containerState(p, name)
		ended := stagepod.Read(p).Result != stagepod.Running // its outcome is known: nothing more starts
		return !follow || s.Running != nil || s.Terminated != nil || ended, nil
	}
	if err := wait.PollUntilContextCancel(ctx, 500*time.Millisecond, true, check); err != nil {
		if ctx.Err() != nil {
			return current, nil // interrupted while following: not an error
		}
		return nil, err
	}
	return current, nil
}

// copyLogs streams one container's log to out.
func copyLogs(ctx context.Context, cs kubernetes.Interface, out io.Writer, pod *corev1.Pod, container string, follow bool) error {
	stream, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, &corev1.PodLogOptions{Container: container, Follow: follow}).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", pod.Namespace, pod.Name, container, err)
	}
	defer stream.Close()
	if _, err := io.Copy(out, stream); err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", pod.Namespace, pod.Name, container, err)
	}
	return nil
}
