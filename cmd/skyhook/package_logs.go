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
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

// logsOptions are the flags of `package logs`.
type logsOptions struct {
	node, stage, container string
	named                  rolloutFlag
	skyhook                string // the rollout --nodewright or --skyhook names
	namespace              string // of the stage pods; "" for every namespace
	follow                 bool
	check                  bool // the stages' checks alone
	tail                   int64
}

// newLogsCommand shows what a package's stage pods printed: the copy
// container's and the agent's lines, read through the apiserver as
// `kubectl logs` reads them.
func newLogsCommand() *cobra.Command {
	var o logsOptions
	cmd := &cobra.Command{
		Use:   "logs <package> [--nodewright NAME] [--node N] [--stage STAGE] [-c CONTAINER] [-f] [--tail N]",
		Short: "The logs of a package's stage pods (newest first)",
		Long: `Prints the logs of the package's stage pods that the filters select, newest
first, separated by ---; each pod container by container (<package>-init, then
each stage's <package>-<stage>, which runs the stage and then its check, or
with the operator's --stage-containers=nodewright the check in a container of
its own, <package>-<stage>check, as NodeWright names them) under a header, or
one container with -c (a container's name, or the stage's). --stage keeps a
run's pod to that stage's containers; --check prints the checks alone, cut
from the stage's container where it runs them. --node is a node name or a
regular expression over the whole name. With -f it follows the newest pod's
running container and the ones after it until the pod ends.

The operator deletes a stage pod once its stage succeeded; a failed pod is
kept. The agent also writes its logs on the node under /var/log/skyhook.

The stage pods are looked for in the operator's namespace: -n, or else the
first of nodewright, skyhook and skyhook-system with an operator Deployment,
or else the namespace of one found anywhere, or else every namespace.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.stage != "" && !validStage(o.stage) {
				return fmt.Errorf("invalid stage %q: must be one of %s", o.stage, stageNames)
			}
			var err error
			if o.skyhook, err = o.named.name(); err != nil {
				return err
			}
			cfg, err := kubeFlags.ToRESTConfig()
			if err != nil {
				return fmt.Errorf("reading the kubeconfig: %w", err)
			}
			cs, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			c, _, err := kubeClient()
			if err != nil {
				return err
			}
			o.namespace = operatorNamespace(cmd.Context(), cmd, c)
			pods, err := stagePodsOf(cmd.Context(), cs, args[0], o)
			if err != nil {
				return err
			}
			if len(pods) == 0 {
				fmt.Fprintln(cmd.OutOrStdout(), "No pods matched the specified filters")
				fmt.Fprintf(cmd.ErrOrStderr(), "(the operator deletes a stage pod once its stage succeeds, see `skyhook package status %s`; "+
					"the agent's own logs stay on the node under /var/log/skyhook/<skyhook>/%s/)\n", args[0], args[0])
				return nil
			}
			if o.follow {
				pods = pods[:1]
			}
			return printPodsLogs(cmd, cs, pods, o)
		},
	}
	cmd.Flags().StringVar(&o.node, "node", "", "only pods on this node, a name or a regular expression")
	addRolloutFlag(cmd, &o.named, "only pods of this NodeWright or Skyhook")
	cmd.Flags().StringVar(&o.stage, "stage", "", "only pods of this stage ("+stageNames+")")
	cmd.Flags().StringVarP(&o.container, "container", "c", "", "only this container (<package>-init, <package>-<stage>, interrupt; or copy, <stage>) or check (<package>-<stage>check or <stage>-check: its container, or its part of the stage's)")
	cmd.Flags().BoolVar(&o.check, "check", false, "only the stages' checks (--stage's alone when given): a check's container, or its part of the stage's container where one container runs both")
	cmd.Flags().BoolVarP(&o.follow, "follow", "f", false, "follow the newest pod's logs while it runs")
	cmd.Flags().Int64Var(&o.tail, "tail", -1, "lines to show from the end of each container's log (-1 for all)")
	return cmd
}

// stagePodsOf finds the package's stage pods (in the operator's namespace,
// or in every one when it is not known) that the filters select, newest
// first.
func stagePodsOf(ctx context.Context, cs kubernetes.Interface, pkg string, o logsOptions) ([]corev1.Pod, error) {
	// Every stage pod has the stage label; the package is filtered here,
	// since pods of this operator's earlier releases keep it under another
	// label than today's (stagepod.PackageOf), and so is the stage, since
	// a run's pod is labelled with its first stage alone (stagepod.Stages).
	list, err := cs.CoreV1().Pods(o.namespace).List(ctx, metav1.ListOptions{LabelSelector: stagepod.StageLabel})
	if err != nil {
		return nil, fmt.Errorf("listing the stage pods: %w", err)
	}
	var pods, lacking []corev1.Pod
	for i := range list.Items {
		view := packageView(&list.Items[i], pkg)
		if view == nil || (o.skyhook != "" && !ownedBy(view, o.skyhook)) {
			continue
		}
		p := *view
		if o.stage != "" && !slices.Contains(stagepod.Stages(&p), skyhookv1.Stage(o.stage)) {
			continue
		}
		if o.node != "" {
			on, err := matchNodes([]string{o.node}, []string{p.Spec.NodeName})
			if err != nil {
				return nil, err
			}
			if len(on) == 0 {
				continue
			}
		}
		if o.container != "" {
			if _, ok := containerIn(&p, o.container); !ok {
				lacking = append(lacking, p)
				continue
			}
		}
		pods = append(pods, p)
	}
	if len(pods) == 0 && len(lacking) > 0 {
		return nil, fmt.Errorf("-c %s: pod %s/%s has the containers %s", o.container, lacking[0].Namespace, lacking[0].Name,
			strings.Join(containerNames(&lacking[0]), ", "))
	}
	sort.SliceStable(pods, func(i, j int) bool { return newer(&pods[i], &pods[j]) })
	return pods, nil
}

// packageView is the stage pod as the package reads it, nil when the pod
// holds none of the package: a pod that runs several packages holds each
// one's containers (stagepod.Views).
func packageView(pod *corev1.Pod, pkg string) *corev1.Pod {
	for _, view := range stagepod.Views(pod) {
		if stagepod.PackageOf(view) == pkg {
			return view
		}
	}
	return nil
}

// ownedBy reports whether the stage pod is of the rollout named name,
// whichever kind's: a NodeWright's pods carry its kind's owner label, and
// a NodeWright and a Skyhook of one name are one rollout.
func ownedBy(pod *corev1.Pod, name string) bool {
	return slices.ContainsFunc(skyhookv1.RolloutKinds, func(k skyhookv1.RolloutKind) bool {
		return pod.Labels[stagepod.OwnerLabel(k)] == name
	})
}

// printPodsLogs prints each pod's logs, the pods separated by ---. A pod
// that went away meanwhile (its stage succeeded) is reported and skipped.
func printPodsLogs(cmd *cobra.Command, cs kubernetes.Interface, pods []corev1.Pod, o logsOptions) error {
	out := cmd.OutOrStdout()
	for i := range pods {
		if i > 0 {
			fmt.Fprintln(out, "\n---")
		}
		if err := printStagePodLogs(cmd.Context(), cs, out, &pods[i], o); err != nil {
			if len(pods) == 1 {
				return err
			}
			fmt.Fprintf(out, "Error getting logs for %s/%s: %v\n", pods[i].Namespace, pods[i].Name, err)
		}
	}
	return nil
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
	for _, part := range partsToPrint(pod, o) {
		var err error
		if pod, err = waitStarted(ctx, cs, pod, part.Container, o.follow); err != nil || ctx.Err() != nil {
			return err // interrupted while following: done, not an error
		}
		state := containerState(pod, part.Container)
		if o.container == "" {
			fmt.Fprintf(out, "==> %s/%s %s: %s <==\n", pod.Namespace, pod.Name, part.title(), describeState(state))
		}
		if state.Running == nil && state.Terminated == nil {
			continue // nothing printed yet; describeState said why
		}
		if part.Mode != "" {
			if err := part.print(ctx, cs, out, pod, o.tail); err != nil {
				return err
			}
			continue
		}
		// A finished container's log is complete: following it would wait
		// on a kubelet that may not end the stream (KWOK's does not).
		follow := o.follow && state.Running != nil
		if err := copyLogs(ctx, cs, out, pod, logOptions(part.Container, follow, o.tail)); err != nil {
			return err
		}
	}
	return nil
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

// logOptions reads one container's log, following it, its last tail lines
// (all when tail is negative).
func logOptions(container string, follow bool, tail int64) *corev1.PodLogOptions {
	opts := &corev1.PodLogOptions{Container: container, Follow: follow}
	if tail >= 0 {
		opts.TailLines = &tail
	}
	return opts
}

// copyLogs streams one container's log to out.
func copyLogs(ctx context.Context, cs kubernetes.Interface, out io.Writer, pod *corev1.Pod, opts *corev1.PodLogOptions) error {
	container := opts.Container
	stream, err := cs.CoreV1().Pods(pod.Namespace).GetLogs(pod.Name, opts).Stream(ctx)
	if err != nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", pod.Namespace, pod.Name, container, err)
	}
	defer stream.Close()
	if _, err := io.Copy(out, stream); err != nil && ctx.Err() == nil {
		return fmt.Errorf("logs of %s/%s container %s: %w", pod.Namespace, pod.Name, container, err)
	}
	return nil
}
