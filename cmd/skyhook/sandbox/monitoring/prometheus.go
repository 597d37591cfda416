package monitoring

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/kubernetes"
	"k8s.io/kubectl/pkg/util/podutils"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
)

// Where Prometheus runs: the names the chart's metrics.* values default to,
// so that metrics.addServiceAccountBinding lets it read the metrics.
const (
	Namespace      = "monitoring"
	ServiceAccount = "prometheus"
	// Port is where Prometheus serves its API and UI on the pod.
	Port = 9090
	// WithoutTokenJob scrapes the first job's targets with no token, when
	// Options.WithoutTokenJob asks: to show the token is what lets it in.
	WithoutTokenJob = "without-token"
	// discoveryRole lets Prometheus discover targets in the cluster.
	discoveryRole = "prometheus-discovery"
)

// Options say what Prometheus runs.
type Options struct {
	// Image runs Prometheus as its entrypoint (nodeimages.Program of a
	// binaries.EnsurePrometheus build).
	Image string
	// NodeSelector places the pod (on a node that runs pods for real).
	NodeSelector map[string]string
	// Jobs are its scrape jobs (ScrapeJobs), Rules its rule file
	// (RuleFile).
	Jobs  []map[string]any
	Rules []byte
	// Interval is how often it scrapes and evaluates (Prometheus's
	// default, 1m, when empty).
	Interval string
	// WithoutTokenJob adds the job WithoutTokenJob.
	WithoutTokenJob bool
}

// Prometheus is a running Prometheus pod.
type Prometheus struct {
	// URL is its API's base, at the pod's address (reached from this
	// machine over the real nodes' network).
	URL string
}

// Deploy runs Prometheus in Namespace, made with its ServiceAccount and a
// ClusterRole to discover Services, EndpointSlices and pods, and waits up
// to timeout until it is ready. Delete removes what it made.
func Deploy(ctx context.Context, cs kubernetes.Interface, o Options, timeout time.Duration) (*Prometheus, error) {
	config, err := Config(o)
	if err != nil {
		return nil, err
	}
	if err := create(ctx, cs, config, o); err != nil {
		return nil, err
	}
	var ip string
	err = wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := cs.CoreV1().Pods(Namespace).Get(ctx, "prometheus", metav1.GetOptions{})
		if err != nil || !podutils.IsPodReady(p) {
			return false, nil
		}
		ip = p.Status.PodIP
		return true, nil
	})
	if err != nil {
		return nil, fmt.Errorf("waiting for Prometheus to be ready: %w", err)
	}
	return &Prometheus{URL: "http://" + net.JoinHostPort(ip, fmt.Sprint(Port))}, nil
}

// create makes the objects Prometheus runs with.
func create(ctx context.Context, cs kubernetes.Interface, config []byte, o Options) error {
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: Namespace}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	if _, err := cs.CoreV1().ServiceAccounts(Namespace).Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: ServiceAccount}}, metav1.CreateOptions{}); err != nil {
		return err
	}
	role := &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: discoveryRole},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "pods"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		},
	}
	if _, err := cs.RbacV1().ClusterRoles().Create(ctx, role, metav1.CreateOptions{}); err != nil {
		return err
	}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: discoveryRole},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: discoveryRole},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: ServiceAccount, Namespace: Namespace}},
	}
	if _, err := cs.RbacV1().ClusterRoleBindings().Create(ctx, binding, metav1.CreateOptions{}); err != nil {
		return err
	}
	files := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus"},
		Data:       map[string]string{"prometheus.yml": string(config), "rules.yaml": string(o.Rules)},
	}
	if _, err := cs.CoreV1().ConfigMaps(Namespace).Create(ctx, files, metav1.CreateOptions{}); err != nil {
		return err
	}
	_, err := cs.CoreV1().Pods(Namespace).Create(ctx, pod(o), metav1.CreateOptions{})
	return err
}

// Delete removes what Deploy made (the namespace goes in the background).
func Delete(ctx context.Context, cs kubernetes.Interface) {
	_ = cs.CoreV1().Namespaces().Delete(ctx, Namespace, metav1.DeleteOptions{})
	_ = cs.RbacV1().ClusterRoleBindings().Delete(ctx, discoveryRole, metav1.DeleteOptions{})
	_ = cs.RbacV1().ClusterRoles().Delete(ctx, discoveryRole, metav1.DeleteOptions{})
}

// Log is the end of Prometheus's log, for an error message.
func Log(ctx context.Context, cs kubernetes.Interface) string {
	tail := int64(30)
	logs, err := cs.CoreV1().Pods(Namespace).GetLogs("prometheus", &corev1.PodLogOptions{TailLines: &tail}).DoRaw(ctx)
	if err != nil {
		return err.Error()
	}
	return string(logs)
}

// Config is Prometheus's configuration: the jobs, the job WithoutTokenJob
// when asked (the first job without its token, its targets labelled with
// that job), and the rule file.
func Config(o Options) ([]byte, error) {
	if len(o.Jobs) == 0 {
		return nil, fmt.Errorf("no scrape job")
	}
	jobs := append([]map[string]any{}, o.Jobs...)
	if o.WithoutTokenJob {
		bare := maps.Clone(o.Jobs[0])
		delete(bare, "authorization")
		bare["job_name"] = WithoutTokenJob
		relabel, _ := bare["relabel_configs"].([]any)
		bare["relabel_configs"] = append(append([]any{}, relabel...), map[string]any{"target_label": "job", "replacement": WithoutTokenJob})
		jobs = append(jobs, bare)
	}
	global := map[string]any{}
	if o.Interval != "" {
		global["scrape_interval"], global["evaluation_interval"] = o.Interval, o.Interval
	}
	return yaml.Marshal(map[string]any{
		"global":         global,
		"rule_files":     []string{"/etc/prometheus/rules.yaml"},
		"scrape_configs": jobs,
	})
}

// pod runs the image as Prometheus with the ConfigMap's files, its
// ServiceAccount's token mounted where the chart's ServiceMonitor reads it.
func pod(o Options) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Labels: map[string]string{"app.kubernetes.io/name": "prometheus"}},
		Spec: corev1.PodSpec{
			ServiceAccountName: ServiceAccount,
			NodeSelector:       o.NodeSelector,
			Containers: []corev1.Container{{
				Name:  "prometheus",
				Image: o.Image,
				Args:  []string{"--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus", fmt.Sprintf("--web.listen-address=:%d", Port)},
				Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: Port}},
				ReadinessProbe: &corev1.Probe{ProbeHandler: corev1.ProbeHandler{
					HTTPGet: &corev1.HTTPGetAction{Path: "/-/ready", Port: intstr.FromString("web")}}, PeriodSeconds: 1},
				VolumeMounts: []corev1.VolumeMount{{Name: "config", MountPath: "/etc/prometheus"}, {Name: "data", MountPath: "/prometheus"}},
			}},
			Volumes: []corev1.Volume{
				{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: "prometheus"}}}},
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
		},
	}
}

// Image is Prometheus's image, of the build binaries.EnsurePrometheus
// makes (once, into the cache; its progress to log), with busybox's
// applets beside it, and the Prometheus release it runs.
func Image(ctx context.Context, busybox string, log io.Writer) (v1.Image, string, error) {
	prom, err := binaries.EnsurePrometheus(ctx, binaries.Options{Log: log})
	if err != nil {
		return nil, "", err
	}
	img, err := nodeimages.Program(busybox, prom.Server, "prometheus")
	return img, prom.Version, err
}
