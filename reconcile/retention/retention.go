// Package retention keeps finished stage pods for a while after their stage
// no longer needs them, so that their logs stay readable (`kubectl logs`,
// `skyhook package logs`), as NodeWright v0.18+ keeps its stage Jobs:
// a succeeded stage for JOB_TTL_SUCCEEDED, failed attempts for
// JOB_TTL_FAILED, of which at most two per stage, the first and the
// latest. A kept pod carries RetainedLabel, which takes it out of the
// rollout (it holds no budget and is no stage's pod any more), and
// UntilAnnotation; the Sweeper deletes it after that time.
package retention

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

const (
	// RetainedLabel marks a kept stage pod: "succeeded" or "failed".
	RetainedLabel = skyhookv1.MetadataPrefix + "/retained"
	// UntilAnnotation is when a kept pod goes (RFC 3339).
	UntilAnnotation = skyhookv1.MetadataPrefix + "/retained-until"

	Succeeded = "succeeded"
	Failed    = "failed"
)

// Retained reports whether the pod is kept only for its logs.
func Retained(pod *corev1.Pod) bool {
	_, ok := pod.Labels[RetainedLabel]
	return ok
}

// Patch is the merge patch that keeps the pod of the UID as outcome
// (Succeeded or Failed) until the time given. The UID makes the apiserver
// refuse it for another pod since created under the same name (the cache
// can show a pod already gone).
func Patch(uid types.UID, outcome string, until time.Time) []byte {
	patch, _ := json.Marshal(map[string]any{"metadata": map[string]any{ // strings only: cannot fail
		"uid":         uid,
		"labels":      map[string]string{RetainedLabel: outcome},
		"annotations": map[string]string{UntilAnnotation: until.UTC().Format(time.RFC3339)},
	}})
	return patch
}

// Expired reports whether a kept pod's time is up; a time that cannot be
// read (someone else's edit) counts as up.
func Expired(pod *corev1.Pod, now time.Time) bool {
	until, err := time.Parse(time.RFC3339, pod.Annotations[UntilAnnotation])
	return err != nil || !now.Before(until)
}

// Surplus are the kept failed attempts of a stage (rollout, node,
// package, version, stage) other than its first and its latest failed
// attempt, which go at once. pods are stage pods of any kind: the latest
// failed attempt may be one not kept but left as the stage's pod (the
// one the stage gave up on).
func Surplus(pods []*corev1.Pod) []*corev1.Pod {
	byStage := map[string][]*corev1.Pod{}
	for _, pod := range pods {
		if pod.Labels[RetainedLabel] != Failed && (Retained(pod) || stagepod.Read(pod).Result != stagepod.Failed) {
			continue
		}
		var owner types.UID
		if ref := metav1.GetControllerOf(pod); ref != nil {
			owner = ref.UID
		}
		key := fmt.Sprintf("%s/%s/%s/%s/%s", owner, pod.Spec.NodeName, stagepod.PackageOf(pod),
			pod.Annotations[stagepod.VersionAnnotation], pod.Labels[stagepod.StageLabel])
		byStage[key] = append(byStage[key], pod)
	}
	var surplus []*corev1.Pod
	for _, tries := range byStage {
		sort.Slice(tries, func(i, j int) bool { return attempt(tries[i]) < attempt(tries[j]) })
		for _, pod := range tries[1:max(1, len(tries)-1)] {
			if Retained(pod) {
				surplus = append(surplus, pod)
			}
		}
	}
	return surplus
}

// attempt is the pod's try of its stage (0 for the first).
func attempt(pod *corev1.Pod) int {
	n, _ := strconv.Atoi(pod.Annotations[stagepod.AttemptAnnotation])
	return n
}

// Sweeper deletes the kept stage pods of a namespace whose time is up, and
// the failed attempts beyond two per stage, every Interval. It reads the
// manager's cache, so a sweep costs a request only per pod it deletes.
type Sweeper struct {
	Client    client.Client
	Namespace string
	Interval  time.Duration
}

// Start sweeps until ctx ends (a manager.Runnable).
func (s *Sweeper) Start(ctx context.Context) error {
	ticker := time.NewTicker(s.Interval)
	defer ticker.Stop()
	for {
		if err := s.Sweep(ctx, time.Now()); err != nil {
			log.FromContext(ctx).Error(err, "sweeping the kept stage pods")
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
		}
	}
}

// NeedLeaderElection: only the leader deletes.
func (s *Sweeper) NeedLeaderElection() bool { return true }

// Sweep deletes what is due now.
func (s *Sweeper) Sweep(ctx context.Context, now time.Time) error {
	// Every stage pod: the latest failed attempt of a stage may be its
	// live pod.
	var list corev1.PodList
	if err := s.Client.List(ctx, &list, client.InNamespace(s.Namespace), client.HasLabels{stagepod.StageLabel}); err != nil {
		return err
	}
	pods := make([]*corev1.Pod, 0, len(list.Items))
	for i := range list.Items {
		pods = append(pods, &list.Items[i])
	}
	due := map[types.UID]*corev1.Pod{}
	for _, pod := range Surplus(pods) {
		due[pod.UID] = pod
	}
	for _, pod := range pods {
		if Retained(pod) && Expired(pod, now) {
			due[pod.UID] = pod
		}
	}
	for _, pod := range due {
		if !pod.DeletionTimestamp.IsZero() {
			continue
		}
		target := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID}}
		if err := s.Client.Delete(ctx, target, client.Preconditions{UID: &pod.UID}); client.IgnoreNotFound(err) != nil {
			return err
		}
	}
	return nil
}
