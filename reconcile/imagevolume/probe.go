package imagevolume

import (
	"context"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"
)

// Prober asks the apiserver whether it keeps image volumes: a server-side
// dry run of a pod with one. An apiserver with the ImageVolume gate off
// drops the volume's source (and then refuses the pod), one that predates
// it knows no such field; both read as no. The answer is kept for Every
// (an apiserver upgrade is seen within it), a failed ask for a minute.
type Prober struct {
	Client client.Client
	// Namespace and Image are the probe pod's (the operator's namespace
	// and pause image): a dry run stores nothing, but admission reads them.
	Namespace, Image string
	// Every is how long an answer is kept (10 minutes when zero).
	Every time.Duration

	mu        sync.Mutex
	supported bool
	until     time.Time
	lastErr   string
}

// Supported reports whether the apiserver keeps image volumes, asking it
// at most once per Every.
func (p *Prober) Supported(ctx context.Context) bool {
	if p == nil {
		return false
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if time.Now().Before(p.until) {
		return p.supported
	}
	every := p.Every
	if every == 0 {
		every = 10 * time.Minute
	}
	supported, err := p.ask(ctx)
	switch {
	case err != nil:
		every = min(every, time.Minute)
		if err.Error() != p.lastErr { // said once, not every minute
			log.FromContext(ctx).Info("image volumes: could not ask the apiserver; stage pods copy their packages with a container", "error", err.Error())
		}
		p.lastErr = err.Error()
	case supported != p.supported || p.until.IsZero() || p.lastErr != "":
		log.FromContext(ctx).Info("image volumes: the apiserver's answer", "supported", supported)
		p.lastErr = ""
	}
	p.supported, p.until = supported, time.Now().Add(every)
	return supported
}

func (p *Prober) ask(ctx context.Context) (bool, error) {
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{GenerateName: "skyhook-image-volume-probe-", Namespace: p.Namespace},
		Spec: corev1.PodSpec{
			AutomountServiceAccountToken: ptr.To(false),
			Containers: []corev1.Container{{Name: "probe", Image: p.Image,
				VolumeMounts: []corev1.VolumeMount{{Name: "probe", MountPath: "/probe", ReadOnly: true}}}},
			Volumes: []corev1.Volume{{Name: "probe", VolumeSource: corev1.VolumeSource{Image: &corev1.ImageVolumeSource{Reference: p.Image}}}},
		},
	}
	if err := p.Client.Create(ctx, pod, client.DryRunAll); err != nil {
		if apierrors.IsInvalid(err) {
			return false, nil // the volume lost its source: the gate is off
		}
		return false, err
	}
	// Admission may add volumes of its own (a token, were it mounted).
	return slices.ContainsFunc(pod.Spec.Volumes, func(v corev1.Volume) bool { return v.Name == "probe" && v.Image != nil }), nil
}
