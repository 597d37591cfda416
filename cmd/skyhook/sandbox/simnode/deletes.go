package simnode

import (
	"context"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
)

// FinishDeletes plays a kubelet's last part in a graceful delete for the
// pods of the simulated nodes, until ctx ends: once a pod deleted with a
// grace period has no finalizers, it is removed (grace period 0) after its
// ShutdownDurationAnnotation, with its UID as the delete's precondition,
// as a kubelet removes a pod it stopped.
//
// This is not a KWOK stage because KWOK's delete step names the pod alone,
// and KWOK may play it twice for one pod (a stage job per watch event of
// the pod): the second would remove a new pod created under the same name
// meanwhile, as a stage run again after a disruption is.
func (f *Fleet) FinishDeletes(ctx context.Context) {
	factory := informers.NewSharedInformerFactoryWithOptions(f.Clientset, 0,
		informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.FieldSelector = "spec.nodeName!=" }),
		informers.WithTransform(slimPod))
	queue := workqueue.NewTypedDelayingQueue[deletion]()
	_, _ = factory.Core().V1().Pods().Informer().AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(obj any) { f.schedule(queue, obj) },
		UpdateFunc: func(_, obj any) { f.schedule(queue, obj) },
	})
	factory.Start(ctx.Done())
	go func() {
		<-ctx.Done()
		queue.ShutDown()
	}()
	for range 4 {
		go f.finishDeletes(ctx, queue)
	}
}

// deletion is a pod to remove: its name, and its UID for the precondition.
type deletion struct {
	namespace, name string
	uid             types.UID
}

// schedule queues the pod's removal once its kubelet would remove it: a
// pod of a simulated node, deleted with a grace period, without
// finalizers, after its shutdown duration.
func (f *Fleet) schedule(queue workqueue.TypedDelayingInterface[deletion], obj any) {
	pod, ok := obj.(*corev1.Pod)
	if !ok || pod.DeletionTimestamp == nil || ptr.Deref(pod.DeletionGracePeriodSeconds, 0) <= 0 || len(pod.Finalizers) > 0 || f.isReal(pod.Spec.NodeName) {
		return
	}
	after, _ := time.ParseDuration(pod.Annotations[ShutdownDurationAnnotation]) // unset or invalid: at once
	queue.AddAfter(deletion{namespace: pod.Namespace, name: pod.Name, uid: pod.UID}, after)
}

// finishDeletes removes the queued pods until the queue shuts down. A pod
// gone already, or replaced by another of its name, is left alone.
func (f *Fleet) finishDeletes(ctx context.Context, queue workqueue.TypedDelayingInterface[deletion]) {
	for {
		d, shutdown := queue.Get()
		if shutdown {
			return
		}
		err := f.Clientset.CoreV1().Pods(d.namespace).Delete(ctx, d.name, metav1.DeleteOptions{
			GracePeriodSeconds: ptr.To[int64](0), Preconditions: &metav1.Preconditions{UID: &d.uid}})
		queue.Done(d)
		if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) && ctx.Err() == nil {
			queue.AddAfter(d, time.Second)
		}
	}
}

// slimPod keeps of a pod what FinishDeletes reads, so that the informer's
// store stays small at thousands of stage pods.
func slimPod(obj any) (any, error) {
	pod, ok := obj.(*corev1.Pod)
	if !ok {
		return obj, nil // a tombstone
	}
	slim := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: pod.Name, Namespace: pod.Namespace, UID: pod.UID, ResourceVersion: pod.ResourceVersion,
		DeletionTimestamp: pod.DeletionTimestamp, DeletionGracePeriodSeconds: pod.DeletionGracePeriodSeconds, Finalizers: pod.Finalizers,
	}, Spec: corev1.PodSpec{NodeName: pod.Spec.NodeName}}
	if d, ok := pod.Annotations[ShutdownDurationAnnotation]; ok {
		slim.Annotations = map[string]string{ShutdownDurationAnnotation: d}
	}
	return slim, nil
}
