package reconcile

import (
	"context"
	"fmt"
	"slices"
	"time"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/imagevolume"
	"github.com/skyhook-go/skyhook/reconcile/lifecycle"
	"github.com/skyhook-go/skyhook/reconcile/retention"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	"github.com/skyhook-go/skyhook/reconcile/upstreamjob"
)

// Stage pods: finding the pod of a step among a node's, creating one,
// reading how it ended (with the stage timeout), and deleting or keeping
// the ones that leave (stagepods_leaving.go says which).
// Package stagepod builds and reads a single pod.

// stagePodFor is the newest try of the step's stage among a package's pods
// (a pod of its own before a run it is a later stage of, at the same try);
// for the config stage, one that mounts the declared configMap.
func stagePodFor(sk *skyhookv1.Skyhook, name string, pods []*corev1.Pod, step lifecycle.Step) *corev1.Pod {
	var found *corev1.Pod
	for _, pod := range pods {
		if !runsStep(pod, step) {
			continue
		}
		if step.Stage == skyhookv1.StageConfig && pod.Annotations[stagepod.ConfigHashAnnotation] != stagepod.ConfigHash(sk.Spec.Packages[name].ConfigMap) {
			continue
		}
		if found == nil || newerTry(pod, found, step.Stage) {
			found = pod
		}
	}
	return found
}

// runsStep reports whether the stage pod runs the step's stage of the
// step's version (alone, or in a run).
func runsStep(pod *corev1.Pod, step lifecycle.Step) bool {
	return pod.Annotations[stagepod.VersionAnnotation] == step.Version && slices.Contains(stagepod.Stages(pod), step.Stage)
}

// configInterruptOf is the interrupt decided for after the config stage a
// pod runs for a changed configMap (the rerun marker, see markConfigInterrupt),
// and whether the pod carries one.
func configInterruptOf(pod *corev1.Pod) (string, bool) {
	if pod == nil || pod.Labels[stagepod.StageLabel] != string(skyhookv1.StageConfig) {
		return "", false
	}
	marker, decided := pod.Annotations[stagepod.ConfigInterruptAnnotation]
	return marker, decided
}

// olderConfigRunning reports whether a config stage pod of the step's
// version still runs with a configMap the spec no longer has (stagePodFor
// passes it over): the config with the new one waits for it, so that two
// config steps never run at once on the node.
func olderConfigRunning(pods []*corev1.Pod, step lifecycle.Step) bool {
	if step.Stage != skyhookv1.StageConfig {
		return false
	}
	for _, pod := range pods {
		if runsStep(pod, step) && stagepod.ReadStage(pod, step.Stage).Result == stagepod.Running {
			return true
		}
	}
	return false
}

// createStagePod creates the pod that runs the step on the node.
func (n *nodePass) createStagePod(ctx context.Context, name string, step lifecycle.Step, attempt int32) error {
	return n.createPod(ctx, n.stageSpec(name, step, attempt))
}

// stageSpec is the spec of the pod that runs the step on the node (with
// the stages that follow it in a run, see runAfter).
func (n *nodePass) stageSpec(name string, step lifecycle.Step, attempt int32) stagepod.Spec {
	r := n.r
	def, configMap := definition(n.sk, name, step, n.snapshots)
	spec := stagepod.Spec{
		Skyhook: n.sk, Package: name, Definition: def, Version: step.Version, Image: step.Image, Stage: step.Stage, Node: n.work.node.Name,
		Namespace: r.Namespace, AgentImage: r.AgentImage, PauseImage: r.PauseImage, ImagePullSecrets: r.ImagePullSecrets, Attempt: attempt, ConfigMap: configMap,
		RuntimeRequiredTaints: r.runtimeTaints(), Timeout: r.stageTimeout(declared(n.sk, name)),
		NodeLabels: n.work.node.Labels, NodeAnnotations: n.work.node.Annotations, NodeOrder: n.work.order,
	}
	if lifecycle.IsInterrupt(step.Stage) {
		spec.Interrupt = n.interrupt
	}
	if marker, decided := n.config[rerunKey(name)]; decided && step.Stage == skyhookv1.StageConfig {
		spec.ConfigInterrupt = &marker
	}
	spec.Then = n.runAfter(step)
	spec.Shape = r.StageShape
	return spec
}

// createPod creates the stage pod of the spec.
func (n *nodePass) createPod(ctx context.Context, spec stagepod.Spec) error {
	r := n.r
	spec.ImageVolume = r.imageVolumes(ctx, n.work.node)
	pod := stagepod.Build(spec)
	if left := r.memory.Created.Left(n.sk.UID, pod.Name); left > 0 {
		// Created by an earlier pass and not in the cache yet: its add
		// event brings the node back; if it never comes (the pod was
		// deleted meanwhile), the node is looked at once the memory ends.
		n.progress.RequeueIn(left)
		return nil
	}
	err := r.Client.Create(ctx, pod)
	if apierrors.IsAlreadyExists(err) {
		if held, err := r.freeName(ctx, n.sk, pod); held || err != nil {
			// Created once the holder is gone. Not remembered as created:
			// the cache will show no pod of the name, and the memory would
			// hold the new one back for its whole window.
			n.progress.RequeueIn(time.Second)
			return err
		}
	} else if err != nil {
		return fmt.Errorf("creating stage pod %s: %w", pod.Name, err)
	}
	r.memory.Created.Add(n.sk.UID, pod.Name)
	n.progress.Applied(spec.Package, spec.Version, n.work.node.Name)
	return nil
}

// outcome reads how a stage pod stands. A pod still running a tenth of its
// timeout (at most a minute) past its deadline counts as failed: its
// kubelet did not stop it, and the stage must not wait forever. Until then
// the pass comes back at that moment.
func (n *nodePass) outcome(pkg string, pod *corev1.Pod, stage skyhookv1.Stage) stagepod.Outcome {
	outcome := n.readOutcome(pod, stage)
	n.r.observeStageEnd(n.sk, pkg, pod, stage, outcome.Result)
	return outcome
}

// readOutcome is what the pod says of the stage, or Failed once it is past
// the stage timeout: the pod's deadline, or for a stage of a run its own
// share of it from its start (stagepod.StageDeadline; the kubelet's
// deadline, their sum, stops the pod only past all of them).
func (n *nodePass) readOutcome(pod *corev1.Pod, stage skyhookv1.Stage) stagepod.Outcome {
	outcome := stagepod.ReadStage(pod, stage)
	if outcome.Result != stagepod.Running {
		return outcome
	}
	if pod.Spec.ActiveDeadlineSeconds == nil {
		return outcome // no stage timeout
	}
	timeout := stagepod.StageTimeout(pod)
	grace := min(timeout/10, time.Minute)
	deadline, timed := stagepod.StageDeadline(pod, stage)
	if !timed {
		// A later stage of a run, not started: the stages before it are
		// timed, and past the pod's deadline a kubelet that did not stop
		// it leaves it to this check.
		deadline, _ = stagepod.Deadline(pod)
	}
	left := time.Until(deadline.Add(grace))
	if left <= 0 {
		return stagepod.Outcome{Result: stagepod.Failed, Message: fmt.Sprintf("did not finish within the stage timeout (%s)", timeout)}
	}
	n.progress.RequeueIn(left)
	return outcome
}

// stageTimeout bounds one run of a stage of the package (nil: one no
// longer declared): its own stageTimeout ("0s": no bound), else the
// operator's (NoStageTimeout: no bound).
func (r *SkyhookReconciler) stageTimeout(pkg *skyhookv1.Package) time.Duration {
	if pkg != nil && pkg.StageTimeout != nil {
		return pkg.StageTimeout.Duration
	}
	if r.StageTimeout == NoStageTimeout {
		return 0
	}
	return r.StageTimeout
}

// logsHint is the kubectl command that shows the failed container's logs
// (the pod's, when no one container failed).
func logsHint(pod *corev1.Pod, container string) string {
	if _, standIn := upstreamjob.JobOf(pod); container == "" || standIn { // a Job's pod names its containers NodeWright's way
		return fmt.Sprintf("kubectl logs -n %s %s --all-containers", pod.Namespace, pod.Name)
	}
	return fmt.Sprintf("kubectl logs -n %s %s -c %s", pod.Namespace, pod.Name, container)
}

// deletePod deletes a stage pod of the Skyhook once. The pod's UID is a
// precondition: the cache can show a pod already gone, and its name may
// be another try's by now.
func (r *SkyhookReconciler) deletePod(ctx context.Context, sk *skyhookv1.Skyhook, pod *corev1.Pod) error {
	var obj client.Object = pod
	opts := []client.DeleteOption{client.PropagationPolicy(metav1.DeletePropagationBackground), client.Preconditions{UID: &pod.UID}}
	if job, standIn := upstreamjob.JobOf(pod); standIn { // NodeWright's Job: it goes, and its pods with it
		obj = &batchv1.Job{ObjectMeta: metav1.ObjectMeta{Name: job, Namespace: pod.Namespace}}
		opts = opts[:1] // the stand-in has the Job's name, not its UID
	}
	return r.takeOut(sk, pod, func() error {
		return r.Client.Delete(ctx, obj, opts...)
	})
}

// retire takes a stage pod its stage no longer needs out of the rollout:
// kept for its logs (package retention) for the TTL of its outcome,
// JOB_TTL_SUCCEEDED or JOB_TTL_FAILED, else deleted. NodeWright's Jobs
// read as stand-ins are deleted: they are not this operator's to keep.
func (r *SkyhookReconciler) retire(ctx context.Context, sk *skyhookv1.Skyhook, pod *corev1.Pod) error {
	outcome, ttl := retention.Succeeded, r.SucceededTTL
	switch stagepod.Read(pod).Result {
	case stagepod.Succeeded:
	case stagepod.Running, stagepod.Disrupted, stagepod.Refused: // nothing of the package's to read
		ttl = 0
	default:
		outcome, ttl = retention.Failed, r.FailedTTL
	}
	if _, standIn := upstreamjob.JobOf(pod); ttl <= 0 || standIn {
		return r.deletePod(ctx, sk, pod)
	}
	target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace}}
	return r.takeOut(sk, pod, func() error {
		return r.Client.Patch(ctx, target, client.RawPatch(types.MergePatchType, retention.Patch(pod.UID, outcome, time.Now().Add(ttl))))
	})
}

// takeOut writes what takes a stage pod out of the rollout (its delete,
// or the mark that keeps it for its logs) once, and remembers it: the
// cache shows the pod as it was until the write's event arrives
// (memory.Recent), and its name may be created again. A pod already gone
// counts as taken out, and so does one whose name another pod has now (the
// write's UID precondition fails).
func (r *SkyhookReconciler) takeOut(sk *skyhookv1.Skyhook, pod *corev1.Pod, write func() error) error {
	if r.memory.Deleted.Has(sk.UID, string(pod.UID)) {
		return nil
	}
	if err := write(); client.IgnoreNotFound(err) != nil && !apierrors.IsConflict(err) && !apierrors.IsInvalid(err) {
		return err
	}
	r.memory.Deleted.Add(sk.UID, string(pod.UID))
	r.memory.Created.Drop(sk.UID, pod.Name)
	return nil
}

// freeName makes way for a stage pod whose name another pod holds: one
// kept for its logs (the same stage run again, a reset, has the same
// name) or one of a deleted rollout of the same name is deleted; one
// leaving (deleting, as an evicted pod is until its kubelet ends it, or
// deleted by this operator) is waited for. It reports whether the name is
// held by such a pod; false: the holder is the pod to create, made by an
// earlier pass that the cache does not show yet.
func (r *SkyhookReconciler) freeName(ctx context.Context, sk *skyhookv1.Skyhook, pod *corev1.Pod) (bool, error) {
	var existing corev1.Pod
	if err := r.APIReader.Get(ctx, client.ObjectKeyFromObject(pod), &existing); err != nil {
		return false, client.IgnoreNotFound(err)
	}
	if !existing.DeletionTimestamp.IsZero() {
		return true, nil
	}
	if retention.Retained(&existing) || ofAnotherObject(&existing, sk) {
		err := r.Client.Delete(ctx, &existing, client.Preconditions{UID: &existing.UID})
		return true, client.IgnoreNotFound(err)
	}
	return r.memory.Deleted.Has(sk.UID, string(existing.UID)), nil
}

// imageVolumes reports whether the node's stage pods mount their package
// images (no copy container): where the apiserver keeps image volumes and
// the node's kubelet and runtime mount them.
func (r *SkyhookReconciler) imageVolumes(ctx context.Context, node *corev1.Node) bool {
	if r.ImageVolumes == nil || r.StageShape == stagepod.NodeWright {
		return false
	}
	if ok, _ := imagevolume.NodeSupports(node); !ok {
		return false
	}
	return r.ImageVolumes.Supported(ctx)
}
