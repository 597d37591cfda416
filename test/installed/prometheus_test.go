package installed

import (
	"context"
	"maps"
	"net"
	"os"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"sigs.k8s.io/yaml"

	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/binaries"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/kubeletnode"
	"github.com/skyhook-go/skyhook/cmd/skyhook/sandbox/nodeimages"
	"github.com/skyhook-go/skyhook/test/promtest"
	"github.com/skyhook-go/skyhook/test/testenv"
)

// Prometheus runs where the chart's defaults expect it (metrics.*): the
// ServiceAccount prometheus in the namespace monitoring.
const (
	monitoringNamespace = "monitoring"
	prometheusAccount   = "prometheus"
	// scrapeInterval is short, so a test sees several scrapes in seconds.
	scrapeInterval = "2s"
	// withoutToken is the job that scrapes the same targets with no token.
	withoutToken = "without-token"
)

// startPrometheus runs Prometheus (built from the module proxy) as a pod
// on a real node, with its own ServiceAccount, allowed to discover the
// targets of the operator's namespace; it scrapes with jobs, a copy of
// the first without the token (job withoutToken), and evaluates the rule
// file. It returns a client of its API, at the pod's address.
func startPrometheus(t *testing.T, jobs []map[string]any, rules []byte) *promtest.Client {
	t.Helper()
	ctx := context.Background()
	prom, err := binaries.EnsurePrometheus(ctx, binaries.Options{Log: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	img, err := nodeimages.Program(busybox, prom.Server, "prometheus")
	if err != nil {
		t.Fatal(err)
	}
	image, err := public.Push(ctx, "tools/prometheus:"+prom.Version, img)
	if err != nil {
		t.Fatal(err)
	}
	config, err := prometheusConfig(jobs)
	if err != nil {
		t.Fatal(err)
	}
	cs, c := env.Clientset, testenv.Client(t, env)
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), monitoringNamespace, metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoleBindings().Delete(context.Background(), "prometheus-discovery", metav1.DeleteOptions{})
		_ = cs.RbacV1().ClusterRoles().Delete(context.Background(), "prometheus-discovery", metav1.DeleteOptions{})
	})
	must(t, c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: monitoringNamespace}}))
	must(t, c.Create(ctx, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: prometheusAccount, Namespace: monitoringNamespace}}))
	must(t, c.Create(ctx, &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-discovery"},
		Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"services", "endpoints", "pods"}, Verbs: []string{"get", "list", "watch"}},
			{APIGroups: []string{"discovery.k8s.io"}, Resources: []string{"endpointslices"}, Verbs: []string{"get", "list", "watch"}},
		},
	}))
	must(t, c.Create(ctx, &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus-discovery"},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: "prometheus-discovery"},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Name: prometheusAccount, Namespace: monitoringNamespace}},
	}))
	must(t, c.Create(ctx, &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: monitoringNamespace},
		Data:       map[string]string{"prometheus.yml": string(config), "rules.yaml": string(rules)},
	}))
	pod := prometheusPod(image)
	must(t, c.Create(ctx, pod))

	var ip string
	testenv.Eventually(t, "Prometheus ready", 2*time.Minute, func() bool {
		p, err := cs.CoreV1().Pods(monitoringNamespace).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil || !podReady(*p) {
			return false
		}
		ip = p.Status.PodIP
		return true
	})
	client, err := promtest.NewClient("http://" + net.JoinHostPort(ip, "9090"))
	if err != nil {
		t.Fatal(err)
	}
	return client
}

// prometheusConfig scrapes with jobs and, to show the token is what lets
// it in, the first job again without its token; the rules are evaluated as
// often as the targets are scraped.
func prometheusConfig(jobs []map[string]any) ([]byte, error) {
	bare := maps.Clone(jobs[0])
	delete(bare, "authorization")
	bare["job_name"] = withoutToken
	relabel := append([]any{}, bare["relabel_configs"].([]any)...)
	bare["relabel_configs"] = append(relabel, map[string]any{"target_label": "job", "replacement": withoutToken})
	return yaml.Marshal(map[string]any{
		"global":         map[string]any{"scrape_interval": scrapeInterval, "evaluation_interval": scrapeInterval},
		"rule_files":     []string{"/etc/prometheus/rules.yaml"},
		"scrape_configs": append(append([]map[string]any{}, jobs...), bare),
	})
}

// prometheusPod runs image as Prometheus with the ConfigMap's files, its
// ServiceAccount's token mounted where the chart's ServiceMonitor reads
// it, on a real node (a pod on a KWOK node never runs).
func prometheusPod(image string) *corev1.Pod {
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "prometheus", Namespace: monitoringNamespace},
		Spec: corev1.PodSpec{
			ServiceAccountName: prometheusAccount,
			NodeSelector:       map[string]string{kubeletnode.Label: kubeletnode.LabelValue},
			Containers: []corev1.Container{{
				Name:  "prometheus",
				Image: image,
				Args:  []string{"--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus", "--web.listen-address=:9090"},
				Ports: []corev1.ContainerPort{{Name: "web", ContainerPort: 9090}},
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

// prometheusLog is the end of the Prometheus pod's log, for a failure.
func prometheusLog() string {
	logs, err := env.Clientset.CoreV1().Pods(monitoringNamespace).GetLogs("prometheus", &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		return err.Error()
	}
	return firstLines(string(logs), 30)
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
