// Package operator assembles the Skyhook operator: a controller-runtime
// manager with the admission webhooks, their certificates and the policy
// store. cmd/manager runs it in a cluster; the sandbox and the tests run the
// same code in-process against a local control plane.
package operator

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"time"

	sourcev1 "github.com/fluxcd/source-controller/api/v1"
	"github.com/open-policy-agent/cert-controller/pkg/rotator"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/metrics/filters"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/skyhook-go/skyhook/api/scheme"
	"github.com/skyhook-go/skyhook/reconcile"
	"github.com/skyhook-go/skyhook/reconcile/budgetstatus"
	"github.com/skyhook-go/skyhook/reconcile/imagevolume"
	"github.com/skyhook-go/skyhook/reconcile/packageset"
	"github.com/skyhook-go/skyhook/reconcile/retention"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
	skyhookwebhook "github.com/skyhook-go/skyhook/webhook"
	"github.com/skyhook-go/skyhook/webhook/defaults"
	"github.com/skyhook-go/skyhook/webhook/policy"
	"github.com/skyhook-go/skyhook/webhook/trust"
)

// Certificate modes.
const (
	// CertsSelfManaged: the operator makes a CA and serving certificate,
	// keeps them in a Secret, rotates them before expiry and injects the CA
	// into its webhook configurations, which it creates.
	CertsSelfManaged = "self"
	// CertsExternal: cert-manager (or another tool) provides the files in
	// CertDir and injects the CA; the webhook configurations are deployed
	// with the operator (config/certmanager).
	CertsExternal = "external"
)

// Options configure the operator.
type Options struct {
	// Namespace holds the operator's certificate Secret and the policy
	// ConfigMaps.
	Namespace string
	// WebhookHost and WebhookPort are where the webhook server listens.
	WebhookHost string
	WebhookPort int
	// CertDir holds the serving certificate (tls.crt, tls.key).
	CertDir string
	// Certs is CertsSelfManaged or CertsExternal.
	Certs string
	// ServiceName is the webhook's Service in Namespace; the apiserver calls
	// https://<ServiceName>.<Namespace>.svc. Ignored with LocalWebhookHost.
	ServiceName string
	// LocalWebhookHost, when set, runs the webhook outside the cluster: the
	// apiserver calls https://<LocalWebhookHost>:<WebhookPort> (or
	// https://<LocalWebhookHost> when it is host:port, for a proxy in front
	// of several replicas) and the
	// operator writes its certificate files itself, as the kubelet would
	// from the Secret. The sandbox and the tests use "localhost".
	LocalWebhookHost string
	// Defaults are the operator-wide defaults the mutating webhook applies.
	Defaults defaults.Options
	// MetricsAddr and ProbeAddr serve metrics and health probes; "0"
	// disables them.
	MetricsAddr string
	// MetricsSecure serves metrics over HTTPS, only to clients whose token
	// the apiserver authenticates and authorizes for GET /metrics (a
	// self-signed certificate unless MetricsCertDir holds one).
	MetricsSecure  bool
	MetricsCertDir string
	// PprofAddr serves Go's profiles (net/http/pprof) when set, for
	// measuring the operator (the rollout benchmark's -profile).
	PprofAddr string
	ProbeAddr string
	// LeaderElection makes one replica of several active.
	LeaderElection bool
	// AgentImage runs the package stages; PauseImage holds a finished stage
	// pod until its outcome is recorded.
	AgentImage string
	PauseImage string
	// ImagePullSecrets name Secrets in Namespace that stage pods pull their
	// images with.
	ImagePullSecrets []string
	// RegistryTransport is how admission reaches registries to verify
	// package images (webhook/trust); http.DefaultTransport when nil.
	RegistryTransport http.RoundTripper
	// NotReadyTimeout and RebootTimeout bound how long a NotReady node in
	// progress keeps its budget slot and how long a reboot may take (the
	// reconciler's defaults when zero).
	NotReadyTimeout time.Duration
	RebootTimeout   time.Duration
	// StageTimeout bounds one stage pod's run (the reconciler's default
	// when zero, reconcile.NoStageTimeout for none).
	StageTimeout time.Duration
	// MaxAttempts bounds the tries of one stage (the reconciler's default,
	// NodeWright's JOB_BACKOFF_LIMIT 3 plus the first try, when zero).
	MaxAttempts int32
	// SucceededTTL and FailedTTL keep stage pods their stages no longer
	// need for their logs, by outcome (JOB_TTL_SUCCEEDED, JOB_TTL_FAILED);
	// 0 deletes them at once.
	SucceededTTL, FailedTTL time.Duration
	// ReapplyOnReboot starts the rollouts over on a node that rebooted
	// outside their interrupts (REAPPLY_ON_REBOOT).
	ReapplyOnReboot bool
	// PodPerStage runs every stage in a pod of its own, as before stage
	// runs (reconcile.SkyhookReconciler.PodPerStage): --stage-runs=false.
	PodPerStage bool
	// StageShape lays a stage pod's stages out in containers
	// (reconcile.SkyhookReconciler.StageShape): --stage-containers.
	StageShape stagepod.Shape
	// NoImageVolumes keeps every stage pod's copy container, even where
	// the apiserver and a node could mount the package image instead
	// (reconcile.SkyhookReconciler.ImageVolumes): --image-volumes=off.
	NoImageVolumes bool
	// DefaultServiceAccount is the ServiceAccount, in a PackageSet's
	// namespace, that PackageSets naming none are applied as. Empty applies
	// them as the operator itself: that is no lockdown, since whoever may
	// write a PackageSet then writes Skyhooks with the operator's rights.
	DefaultServiceAccount string
	// AllowCrossNamespaceRefs lets a PackageSet's sourceRef name another
	// namespace (--no-cross-namespace-refs=false); by default such a set is
	// refused.
	AllowCrossNamespaceRefs bool
	// ArtifactHostname replaces the host of Flux artifact URLs, for an
	// operator outside the cluster (empty keeps them).
	ArtifactHostname string
	// RuntimeRequiredTaint is the taint runtimeRequired Skyhooks hold (the
	// reconciler's default when its key is empty).
	RuntimeRequiredTaint corev1.Taint
	// DropLegacyMetrics unpublishes the deprecated skyhook_* names of
	// NodeWright's gauges (NodeWright's PUBLISH_LEGACY_METRICS=false), for
	// the whole process and for good: the metrics registry is global. The
	// zero value publishes them, as NodeWright does by default.
	DropLegacyMetrics bool

	// inProcess allows starting the operator more than once in one process
	// (controller names are otherwise unique per process, for metrics).
	inProcess bool
}

// Default images of the stage pods.
const (
	DefaultAgentImage = "ghcr.io/skyhook-go/skyhook-agent:latest"
	DefaultPauseImage = "registry.k8s.io/pause:3.10"
)

// CertSecretName is the Secret holding the self-managed certificates.
const CertSecretName = "skyhook-webhook-cert"

// Run runs the operator until ctx ends.
func Run(ctx context.Context, cfg *rest.Config, opts Options) error {
	mgr, err := New(ctx, cfg, opts)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// New assembles the operator's manager; Start runs it.
func New(ctx context.Context, cfg *rest.Config, opts Options) (manager.Manager, error) {
	if opts.Certs == "" {
		opts.Certs = CertsSelfManaged
	}
	if opts.Certs != CertsSelfManaged && opts.Certs != CertsExternal {
		return nil, fmt.Errorf("--certs: must be %q or %q, got %q", CertsSelfManaged, CertsExternal, opts.Certs)
	}
	if opts.DropLegacyMetrics {
		reconcile.UnpublishLegacyMetrics()
	}
	sch := scheme.New()
	inNamespace := cache.ByObject{Namespaces: map[string]cache.Config{opts.Namespace: {}}}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                 sch,
		Metrics:                metricsOptions(opts),
		HealthProbeBindAddress: opts.ProbeAddr,
		PprofBindAddress:       opts.PprofAddr,
		LeaderElection:         opts.LeaderElection,
		LeaderElectionID:       "skyhook-operator.skyhook.nvidia.com",
		// The Lease lives beside the operator's other objects, where its Role
		// grants it; outside a pod there is no service account file to read
		// the namespace from.
		LeaderElectionNamespace: opts.Namespace,
		Controller:              ctrlconfig.Controller{SkipNameValidation: &opts.inProcess},
		// Only the operator's own Secret, ConfigMaps and pods (its stage
		// pods, of every kind of rollout, live in its namespace) are
		// cached, and nodes without what the operator never reads.
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				&corev1.Secret{}:    inNamespace,
				&corev1.ConfigMap{}: inNamespace,
				&batchv1.Job{}:      inNamespace, // NodeWright's stage Jobs, read when taking over
				&corev1.Pod{}:       {Namespaces: map[string]cache.Config{opts.Namespace: {}}, Transform: trimStagePod},
				&corev1.Node{}:      {Transform: trimNode},
			},
		},
	})
	if err != nil {
		return nil, err
	}

	defaultPolicies, err := policy.Defaults()
	if err != nil {
		return nil, err
	}
	store := policy.NewStore(defaultPolicies)
	if err := (&policy.ConfigMapReconciler{
		Client: mgr.GetClient(), Namespace: opts.Namespace, Store: store,
		Recorder: mgr.GetEventRecorder("skyhook-policies"),
	}).SetupWithManager(mgr); err != nil {
		return nil, err
	}

	if opts.AgentImage == "" {
		opts.AgentImage = DefaultAgentImage
	}
	if opts.PauseImage == "" {
		opts.PauseImage = DefaultPauseImage
	}
	if err := (&reconcile.SkyhookReconciler{
		Client: mgr.GetClient(), Namespace: opts.Namespace, AgentImage: opts.AgentImage, PauseImage: opts.PauseImage, ImagePullSecrets: opts.ImagePullSecrets,
		Recorder: mgr.GetEventRecorder("skyhook-operator"), APIReader: mgr.GetAPIReader(), OperatorVersion: RunningVersion(),
		NotReadyTimeout: opts.NotReadyTimeout, RebootTimeout: opts.RebootTimeout, StageTimeout: opts.StageTimeout, RuntimeRequiredTaint: opts.RuntimeRequiredTaint,
		MaxAttempts: opts.MaxAttempts, ReapplyOnReboot: opts.ReapplyOnReboot, SucceededTTL: opts.SucceededTTL, FailedTTL: opts.FailedTTL,
		PodPerStage: opts.PodPerStage, StageShape: opts.StageShape, ImageVolumes: imageVolumeProber(mgr.GetClient(), opts),
	}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := (&budgetstatus.Reconciler{Client: mgr.GetClient()}).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if err := mgr.Add(&retention.Sweeper{Client: mgr.GetClient(), Namespace: opts.Namespace, Interval: retentionSweep}); err != nil {
		return nil, err
	}

	if err := setupPackageSets(ctx, mgr, opts); err != nil {
		return nil, err
	}

	server := webhook.NewServer(webhook.Options{Host: opts.WebhookHost, Port: opts.WebhookPort, CertDir: opts.CertDir})
	skyhookwebhook.Register(server, sch, skyhookwebhook.Options{Reader: mgr.GetAPIReader(), Defaults: opts.Defaults, Policies: store,
		Events: mgr.GetEventRecorder("skyhook-admission"),
		Trust: &trust.Verifier{Policies: mgr.GetClient(), Secrets: mgr.GetClient(), Namespace: opts.Namespace,
			PullSecrets: opts.ImagePullSecrets, Transport: opts.RegistryTransport}})
	if err := mgr.AddReadyzCheck("webhook", server.StartedChecker()); err != nil {
		return nil, err
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := publishVersion(mgr, opts.Namespace); err != nil {
		return nil, err
	}
	if opts.Certs == CertsExternal {
		return mgr, mgr.Add(server)
	}
	return mgr, selfManagedCerts(ctx, mgr, server, opts)
}

// imageVolumeProber asks the apiserver whether stage pods may mount their
// package images, unless turned off.
func imageVolumeProber(c client.Client, opts Options) *imagevolume.Prober {
	if opts.NoImageVolumes {
		return nil
	}
	return &imagevolume.Prober{Client: c, Namespace: opts.Namespace, Image: opts.PauseImage}
}

// metricsOptions serves metrics over HTTPS behind the apiserver's
// authentication and authorization when asked to (controller-runtime's
// filter does both with TokenReviews and SubjectAccessReviews), plain HTTP
// otherwise (the sandbox and tests, on loopback).
func metricsOptions(opts Options) metricsserver.Options {
	o := metricsserver.Options{BindAddress: opts.MetricsAddr}
	if opts.MetricsSecure {
		o.SecureServing = true
		o.FilterProvider = filters.WithAuthenticationAndAuthorization
		o.CertDir = opts.MetricsCertDir
	}
	return o
}

// selfManagedCerts installs the webhook configurations and the certificate
// rotator, and starts the webhook server once the certificate is in CertDir
// and its CA in the configurations.
func selfManagedCerts(ctx context.Context, mgr manager.Manager, server webhook.Server, opts Options) error {
	host := opts.ServiceName + "." + opts.Namespace + ".svc"
	if opts.LocalWebhookHost != "" {
		host = opts.localWebhookHostname()
	}
	if err := installWebhookConfigurations(ctx, mgr, opts); err != nil {
		return err
	}
	ready := make(chan struct{})
	err := rotator.AddRotator(mgr, &rotator.CertRotator{
		SecretKey:      types.NamespacedName{Namespace: opts.Namespace, Name: CertSecretName},
		CertDir:        opts.CertDir,
		CAName:         "skyhook-webhook-ca",
		CAOrganization: "skyhook",
		DNSName:        host,
		IsReady:        ready,
		Webhooks:       webhookInfo(),
		FieldOwner:     fieldOwner,
		ControllerName: rotatorName(opts),
	})
	if err != nil {
		return err
	}
	if opts.LocalWebhookHost != "" {
		if err := (&certFileWriter{client: mgr.GetClient(), key: types.NamespacedName{Namespace: opts.Namespace, Name: CertSecretName}, dir: opts.CertDir}).setup(mgr); err != nil {
			return err
		}
	}
	return mgr.Add(onEveryReplica(func(ctx context.Context) error {
		select {
		case <-ready:
			return mgr.Add(server)
		case <-ctx.Done():
			return nil
		}
	}))
}

// onEveryReplica is a runnable that runs on every replica, the leader or
// not. The manager runs a runnable that does not say so only on the
// leader: the webhook server's start would then wait for leadership, and a
// standby replica would never serve the webhooks nor report ready (a
// Deployment of two would never be available in full).
type onEveryReplica manager.RunnableFunc

func (f onEveryReplica) Start(ctx context.Context) error { return f(ctx) }

func (onEveryReplica) NeedLeaderElection() bool { return false }

// retentionSweep is how often the stage pods kept for their logs are
// looked at: a kept pod outlives its TTL by at most this.
const retentionSweep = time.Minute

// rotatorName names the certificate rotator's controller; an operator
// started again in the same process needs a new name (controller names are
// checked process-wide, and the rotator takes no SkipNameValidation). A
// count, not the webhook port: a later start may get the same free port.
func rotatorName(opts Options) string {
	if opts.inProcess {
		return "cert-rotator-" + strconv.FormatInt(inProcessStarts.Add(1), 10)
	}
	return "cert-rotator"
}

// inProcessStarts counts the operators started in this process.
var inProcessStarts atomic.Int64

// WebhookAddress is host:port of a local webhook, for clients and tests:
// LocalWebhookHost's own port when it has one (a proxy in front of one or
// more replicas, each listening on its WebhookPort), else WebhookPort.
func (o Options) WebhookAddress() string {
	if _, _, err := net.SplitHostPort(o.LocalWebhookHost); err == nil {
		return o.LocalWebhookHost
	}
	return net.JoinHostPort(o.LocalWebhookHost, strconv.Itoa(o.WebhookPort))
}

// localWebhookHostname is LocalWebhookHost without a port, the name the
// serving certificate is for.
func (o Options) localWebhookHostname() string {
	if host, _, err := net.SplitHostPort(o.LocalWebhookHost); err == nil {
		return host
	}
	return o.LocalWebhookHost
}

// setupPackageSets runs the PackageSet reconciler when Flux's source kinds
// are installed; without them a watch on them would stop the whole manager,
// so PackageSets then wait (and the log says why).
func setupPackageSets(ctx context.Context, mgr manager.Manager, opts Options) error {
	for _, kind := range []string{sourcev1.GitRepositoryKind, sourcev1.OCIRepositoryKind} {
		if _, err := mgr.GetRESTMapper().RESTMapping(schema.GroupKind{Group: sourcev1.GroupVersion.Group, Kind: kind}, sourcev1.GroupVersion.Version); err != nil {
			ctrl.Log.Info("Flux source kinds are not installed; PackageSets are not reconciled", "missing", kind, "error", err.Error())
			return nil
		}
	}
	return (&packageset.Reconciler{
		Client: mgr.GetClient(), APIReader: mgr.GetAPIReader(), Recorder: mgr.GetEventRecorder("skyhook-packageset"),
		Impersonator:          packageset.NewImpersonator(mgr.GetConfig(), mgr.GetScheme(), mgr.GetRESTMapper()),
		DefaultServiceAccount: opts.DefaultServiceAccount, AllowCrossNamespaceRefs: opts.AllowCrossNamespaceRefs,
		HostnameOverwrite: opts.ArtifactHostname,
	}).SetupWithManager(ctx, mgr)
}
