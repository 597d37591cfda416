// Command manager is the Skyhook operator: admission webhooks now, the
// rollout controllers as they land. It runs in the cluster; see
// cmd/manager/operator for what it assembles.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
	_ "time/tzdata" // interrupt windows name IANA time zones; the image may have none

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	skyhookv1 "github.com/skyhook-go/skyhook/api/v1alpha1"
	"github.com/skyhook-go/skyhook/cmd/manager/operator"
	"github.com/skyhook-go/skyhook/reconcile"
	"github.com/skyhook-go/skyhook/reconcile/stagepod"
)

func main() {
	opts := operator.Options{}
	var cpuRequest, cpuLimit, memRequest, memLimit string
	flag.StringVar(&opts.Namespace, "namespace", envOr("POD_NAMESPACE", "skyhook"), "namespace of the operator's certificate Secret and policy ConfigMaps")
	flag.StringVar(&opts.WebhookHost, "webhook-host", "", "address the webhook server listens on (all when empty)")
	flag.IntVar(&opts.WebhookPort, "webhook-port", 9443, "port of the webhook server")
	flag.StringVar(&opts.CertDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the serving certificate (tls.crt, tls.key)")
	flag.StringVar(&opts.Certs, "certs", operator.CertsSelfManaged, `"self": the operator makes, stores, rotates and injects its certificates; "external": cert-manager does`)
	flag.StringVar(&opts.ServiceName, "webhook-service", "skyhook-webhook", "Service of the webhook server in --namespace")
	flag.StringVar(&opts.LocalWebhookHost, "local-webhook-host", "", "run outside the cluster: the apiserver calls https://<host>:<webhook-port>, or https://<host:port> when it names a port (a proxy in front of replicas)")
	flag.StringVar(&opts.MetricsAddr, "metrics-bind-address", ":8080", `metrics address ("0" disables)`)
	flag.BoolVar(&opts.MetricsSecure, "metrics-secure", true, "serve metrics over HTTPS to clients the apiserver authenticates and authorizes for GET /metrics (false: plain HTTP)")
	legacyMetrics := flag.String("publish-legacy-metrics", envOr("PUBLISH_LEGACY_METRICS", "true"), "also publish NodeWright's gauges under their deprecated skyhook_* names labelled skyhook_name, beside nodewright_*; false drops them (default: $PUBLISH_LEGACY_METRICS, as NodeWright reads it, else true)")
	flag.StringVar(&opts.MetricsCertDir, "metrics-cert-dir", "", "directory of the metrics server's tls.crt and tls.key (empty: a self-signed certificate)")
	flag.StringVar(&opts.ProbeAddr, "health-probe-bind-address", ":8081", "health probe address")
	flag.StringVar(&opts.PprofAddr, "pprof-bind-address", "", "address of Go's profiles (/debug/pprof/), off when empty")
	flag.BoolVar(&opts.LeaderElection, "leader-elect", false, "elect one active replica")
	flag.DurationVar(&opts.NotReadyTimeout, "not-ready-timeout", 0, "how long a NotReady node in progress holds its budget slot before the rollout skips it (default 10m)")
	flag.StringVar(&opts.AgentImage, "agent-image", operator.DefaultAgentImage, "the image that runs the package stages (make images builds it); a package's agentImageOverride wins")
	flag.StringVar(&opts.PauseImage, "pause-image", operator.DefaultPauseImage, "the image that keeps a finished stage pod until its outcome is recorded")
	pullSecrets := flag.String("image-pull-secret", os.Getenv("IMAGE_PULL_SECRET"), "Secret(s) in --namespace, comma-separated, that stage pods pull the package, agent and pause images with (default: $IMAGE_PULL_SECRET, as upstream's operator reads it)")
	stageTimeout := flag.String("stage-timeout", envOr("JOB_STAGE_TIMEOUT", "1h"), "how long one run of a stage may take before it is stopped and counts as failed, unless the package sets stageTimeout; 0 for no bound (default: $JOB_STAGE_TIMEOUT, as NodeWright reads it, else 1h)")
	backoffLimit := flag.String("backoff-limit", envOr("JOB_BACKOFF_LIMIT", "3"), "how many times a failed stage is tried again before the node is erroring (default: $JOB_BACKOFF_LIMIT, as NodeWright reads it, else 3)")
	ttlSucceeded := flag.String("ttl-succeeded", envOr("JOB_TTL_SUCCEEDED", "0"), "how long a succeeded stage pod is kept for its logs once its stage is recorded, at least 1m; 0 deletes it at once (default: $JOB_TTL_SUCCEEDED, as NodeWright reads it, else 0)")
	ttlFailed := flag.String("ttl-failed", envOr("JOB_TTL_FAILED", "24h"), "how long a failed attempt of a stage (the first and the latest of each stage) is kept for its logs, at least 1m; 0 deletes it at once (default: $JOB_TTL_FAILED, as NodeWright reads it, else 24h)")
	imageVolumes := flag.String("image-volumes", "auto", "auto: a stage pod mounts its package image as an image volume and has no copy container where the apiserver keeps image volumes and the node's kubelet (1.35+) and runtime (containerd 2.1+, CRI-O 1.31+) mount them; off: every stage pod copies its package with a container (<package>-init)")
	packageRuns := flag.Bool("package-runs", false, "removed, does nothing: every package has pods of its own, which measured faster and cheaper than one pod of several (docs/rollout.md); still accepted so that a deployment that sets it keeps starting")
	stageContainers := flag.String("stage-containers", string(stagepod.Compact), "how a stage pod lays out a package's stages: compact (one container per stage, <package>-<stage>, running the stage then its check) or nodewright (the check in a container of its own, <package>-<stage>check, as NodeWright's pods have it; each container costs the kubelet and the control plane more)")
	stageRuns := flag.Bool("stage-runs", true, "run an install's config stage in the pod of its apply or upgrade, one pod where there were two; each stage keeps its own containers, timeout, retries and record; false gives every stage a pod of its own (docs/rollout.md)")
	reapply := flag.String("reapply-on-reboot", envOr("REAPPLY_ON_REBOOT", "false"), "start the rollouts over on a node that rebooted outside their own interrupts, for hosts whose changes do not outlive a boot (default: $REAPPLY_ON_REBOOT, as NodeWright reads it, else false)")
	flag.DurationVar(&opts.RebootTimeout, "reboot-timeout", 0, "how long a rebooted node may take to come back Ready with a new boot ID (default 10m)")
	flag.StringVar(&cpuRequest, "default-cpu-request", "", "cpuRequest for packages that set no resources (all four default flags or none)")
	flag.StringVar(&cpuLimit, "default-cpu-limit", "", "cpuLimit for packages that set no resources")
	flag.StringVar(&memRequest, "default-memory-request", "", "memoryRequest for packages that set no resources")
	flag.StringVar(&memLimit, "default-memory-limit", "", "memoryLimit for packages that set no resources")
	flag.StringVar(&opts.DefaultServiceAccount, "default-service-account", "", "ServiceAccount, in the PackageSet's namespace, that PackageSets without spec.serviceAccountName apply as (empty: as the operator itself, which is no lockdown; set it on a multi-tenant cluster)")
	noCrossNamespaceRefs := flag.Bool("no-cross-namespace-refs", true, "refuse PackageSets whose sourceRef names another namespace (Ready=False, reason AccessDenied)")
	cleanup := flag.Bool("cleanup", false, "instead of running: delete every PackageSet, NodeWright, Skyhook and DeploymentPolicy, wait until their finalizers are done, then delete the webhook configurations the operator made (the Helm chart's pre-delete hook)")
	cleanupTimeout := flag.Duration("cleanup-timeout", 2*time.Minute, "how long --cleanup waits")
	migration := operator.SelectorMigrationOptions{}
	flag.StringVar(&migration.Deployment, "migrate-selector", "", "instead of running: delete this Deployment in --namespace when its selector is not --selector and it belongs to the Helm release --release, and wait until it is gone (the Helm chart's selectorMigration pre-upgrade hook)")
	flag.StringVar(&migration.Release, "release", "", "with --migrate-selector: the Helm release the Deployment must belong to")
	selector := flag.String("selector", "", "with --migrate-selector: the selector the chart renders, key=value,...")
	migrationTimeout := flag.Duration("migration-timeout", 2*time.Minute, "how long --migrate-selector waits")
	taint := flag.String("runtime-required-taint", os.Getenv("RUNTIME_REQUIRED_TAINT"), "the taint runtimeRequired rollouts hold on their nodes, key[=value]:Effect (default: $RUNTIME_REQUIRED_TAINT, as NodeWright reads it; else each kind its own, skyhook.nvidia.com=runtime-required:NoSchedule for Skyhooks and nodewright.nvidia.com=runtime-required:NoSchedule for NodeWrights, both recognised either way)")
	showVersion := flag.Bool("version", false, "print the version and exit")
	zapOpts := zap.Options{}
	zapOpts.BindFlags(flag.CommandLine)
	flag.Parse()
	if *showVersion {
		fmt.Println(versionLine())
		return
	}
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&zapOpts)))
	if *cleanup {
		os.Exit(runCleanup(opts.Certs, *cleanupTimeout))
	}
	if migration.Deployment != "" {
		migration.Namespace = opts.Namespace
		os.Exit(runSelectorMigration(migration, *selector, *migrationTimeout))
	}

	logMemoryLimit()
	resources, err := defaultResources(cpuRequest, cpuLimit, memRequest, memLimit)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts.Defaults.Resources = resources
	opts.AllowCrossNamespaceRefs = !*noCrossNamespaceRefs
	if sa := opts.DefaultServiceAccount; sa != "" {
		if errs := validation.IsDNS1123Subdomain(sa); len(errs) > 0 {
			fmt.Fprintf(os.Stderr, "--default-service-account %q: %s\n", sa, strings.Join(errs, "; "))
			os.Exit(2)
		}
	}
	if err := retryLimits(&opts, *stageTimeout, *backoffLimit); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	if err := keepTTLs(&opts, *ttlSucceeded, *ttlFailed); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts.PodPerStage = !*stageRuns
	if opts.StageShape, err = stagepod.ParseShape(*stageContainers); err != nil {
		fmt.Fprintln(os.Stderr, "--stage-containers:", err)
		os.Exit(2)
	}
	if *packageRuns {
		// Pods of several packages that an earlier operator left are still
		// read to their end; no new ones are made.
		fmt.Fprintln(os.Stderr, "warning: --package-runs was removed and does nothing: each package runs in pods of its own (docs/rollout.md); drop the flag")
	}
	switch *imageVolumes {
	case "auto":
	case "off":
		opts.NoImageVolumes = true
	default:
		fmt.Fprintf(os.Stderr, "--image-volumes=%q: want auto or off\n", *imageVolumes)
		os.Exit(2)
	}
	if opts.ReapplyOnReboot, err = parseBool("--reapply-on-reboot (REAPPLY_ON_REBOOT)", *reapply); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	publishLegacy, err := parseBool("--publish-legacy-metrics (PUBLISH_LEGACY_METRICS)", *legacyMetrics)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	opts.DropLegacyMetrics = !publishLegacy
	opts.ImagePullSecrets = splitList(*pullSecrets)
	if opts.RuntimeRequiredTaint, err = parseTaint(*taint); err != nil {
		fmt.Fprintln(os.Stderr, "--runtime-required-taint:", err)
		os.Exit(2)
	}
	if err := operator.Run(ctrl.SetupSignalHandler(), ctrl.GetConfigOrDie(), opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// runCleanup runs operator.Cleanup; its exit code.
func runCleanup(certs string, timeout time.Duration) int {
	ctx, cancel := context.WithTimeout(ctrl.SetupSignalHandler(), timeout)
	defer cancel()
	if err := operator.Cleanup(ctx, ctrl.GetConfigOrDie(), operator.CleanupOptions{Certs: certs, Out: os.Stdout}); err != nil {
		fmt.Fprintln(os.Stderr, "cleanup:", err)
		return 1
	}
	fmt.Println("cleanup: done")
	return 0
}

// runSelectorMigration runs operator.MigrateSelector; its exit code.
func runSelectorMigration(opts operator.SelectorMigrationOptions, selector string, timeout time.Duration) int {
	labels, err := parseSelector(selector)
	if err != nil {
		fmt.Fprintln(os.Stderr, "--selector:", err)
		return 2
	}
	opts.Selector, opts.Out = labels, os.Stdout
	ctx, cancel := context.WithTimeout(ctrl.SetupSignalHandler(), timeout)
	defer cancel()
	if err := operator.MigrateSelector(ctx, ctrl.GetConfigOrDie(), opts); err != nil {
		fmt.Fprintln(os.Stderr, "selector migration:", err)
		return 1
	}
	return 0
}

// parseSelector reads key=value,... into labels; an empty selector is
// refused, since every Deployment's selector has labels.
func parseSelector(s string) (map[string]string, error) {
	labels := map[string]string{}
	for _, item := range splitList(s) {
		key, value, ok := strings.Cut(item, "=")
		if !ok || key == "" {
			return nil, fmt.Errorf("%q: want key=value,...", s)
		}
		labels[key] = value
	}
	if len(labels) == 0 {
		return nil, fmt.Errorf("empty: want key=value,...")
	}
	return labels, nil
}

// versionLine is what --version prints.
func versionLine() string {
	return "skyhook-operator " + operator.RunningVersion()
}

// defaultResources parses the four default flags: all or none.
func defaultResources(values ...string) (*skyhookv1.ResourceRequirements, error) {
	names := []string{"--default-cpu-request", "--default-cpu-limit", "--default-memory-request", "--default-memory-limit"}
	set := 0
	q := make([]resource.Quantity, len(values))
	for i, v := range values {
		if v == "" {
			continue
		}
		set++
		var err error
		if q[i], err = resource.ParseQuantity(v); err != nil {
			return nil, fmt.Errorf("%s: %w", names[i], err)
		}
	}
	switch set {
	case 0:
		return nil, nil
	case len(values):
		return &skyhookv1.ResourceRequirements{CPURequest: &q[0], CPULimit: &q[1], MemoryRequest: &q[2], MemoryLimit: &q[3]}, nil
	default:
		return nil, fmt.Errorf("set all four of %v, or none", names)
	}
}

// retryLimits reads --stage-timeout (a duration, 0 for no bound) and
// --backoff-limit (the tries after the first) into opts.
func retryLimits(opts *operator.Options, stageTimeout, backoffLimit string) error {
	d, err := time.ParseDuration(stageTimeout)
	if err != nil || d < 0 {
		return fmt.Errorf("--stage-timeout (JOB_STAGE_TIMEOUT) %q: want a duration of 0 or more, such as 1h or 90m", stageTimeout)
	}
	opts.StageTimeout = d
	if d == 0 {
		opts.StageTimeout = reconcile.NoStageTimeout
	}
	limit, err := strconv.ParseInt(backoffLimit, 10, 32)
	if err != nil || limit < 0 || limit > 100 {
		return fmt.Errorf("--backoff-limit (JOB_BACKOFF_LIMIT) %q: want a whole number from 0 to 100", backoffLimit)
	}
	opts.MaxAttempts = int32(limit) + 1
	return nil
}

// keepTTLs reads --ttl-succeeded and --ttl-failed: 0, or at least a
// minute, as NodeWright refuses less (it has no 0; here 0 keeps nothing).
func keepTTLs(opts *operator.Options, succeeded, failed string) error {
	for _, ttl := range []struct {
		flag, env, value string
		into             *time.Duration
	}{{"--ttl-succeeded", "JOB_TTL_SUCCEEDED", succeeded, &opts.SucceededTTL}, {"--ttl-failed", "JOB_TTL_FAILED", failed, &opts.FailedTTL}} {
		d, err := time.ParseDuration(ttl.value) // "0" parses as 0
		if err != nil || d < 0 || (d > 0 && d < time.Minute) {
			return fmt.Errorf("%s (%s) %q: want 0 or a duration of at least 1m, such as 1h or 24h", ttl.flag, ttl.env, ttl.value)
		}
		*ttl.into = d
	}
	return nil
}

// parseBool reads a boolean flag given as a string, as the environment
// variable behind its default is (NodeWright's env values are strings).
func parseBool(flagName, value string) (bool, error) {
	b, err := strconv.ParseBool(value)
	if err != nil {
		return false, fmt.Errorf("%s %q: want true or false", flagName, value)
	}
	return b, nil
}

func envOr(name, fallback string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return fallback
}

// parseTaint reads key[=value]:Effect, the form kubectl taint uses. It is
// written here because the parser kubectl uses lives in k8s.io/kubernetes,
// which is not meant to be imported.
//
// An empty s is no taint (each kind's own). As NodeWright v0.20, a key
// longer than 53 characters is refused: the node annotation
// autoTaint_<key> must be a name of at most 63 characters. (NodeWright
// v0.20 also refuses a '/'; here it becomes '_' in that annotation.)
func parseTaint(s string) (corev1.Taint, error) {
	if s == "" {
		return corev1.Taint{}, nil
	}
	rest, effect, ok := strings.Cut(s, ":")
	if !ok {
		return corev1.Taint{}, fmt.Errorf("%q: want key[=value]:Effect", s)
	}
	key, value, _ := strings.Cut(rest, "=")
	t := corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)}
	switch t.Effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		return t, fmt.Errorf("%q: the effect must be NoSchedule, PreferNoSchedule or NoExecute", s)
	}
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return t, fmt.Errorf("%q: key: %s", s, strings.Join(errs, "; "))
	}
	if len(key) > 53 {
		return t, fmt.Errorf("%q: key: must have at most 53 characters, so that the node annotation autoTaint_<key> is a valid name", s)
	}
	if value != "" {
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return t, fmt.Errorf("%q: value: %s", s, strings.Join(errs, "; "))
		}
	}
	return t, nil
}

// splitList is a comma-separated flag's items, blanks dropped.
func splitList(value string) []string {
	var items []string
	for _, item := range strings.Split(value, ",") {
		if item = strings.TrimSpace(item); item != "" {
			items = append(items, item)
		}
	}
	return items
}
