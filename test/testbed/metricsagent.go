// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"time"

	"github.com/prometheus/common/model"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/kubernetes"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"
)

// PrometheusImageEnv names the reference of the Prometheus image that make
// prometheus-image saves as $TESTBED_IMAGES_DIR/prometheus.tar: the bed's own
// Prometheus binary, run on the spokes' nodes as their metrics agents.
const PrometheusImageEnv = "TESTBED_PROMETHEUS_IMAGE"

// What InstallMetricsAgent puts on a cluster.
const (
	// MetricsAgentNamespace holds the metrics agent's Deployment and ConfigMap.
	MetricsAgentNamespace = "monitoring"
	// MetricsAgentName names them.
	MetricsAgentName = "prometheus-agent"
	// metricsAgentPort is where the agent serves its own API (readiness).
	metricsAgentPort = 9090
)

// MetricsAgentOptions says what a cluster's metrics agent scrapes and how it labels
// what it writes.
type MetricsAgentOptions struct {
	// Targets are the host:port addresses it scrapes under the job "gateway", for
	// example Traefik.MetricsTarget().
	Targets []string
	// ExternalLabels are added to every sample it writes, as a per-cluster pipeline
	// adds the cluster's name: {cluster: <name>}.
	ExternalLabels map[string]string
	// Image is the Prometheus image. Default: $TESTBED_PROMETHEUS_IMAGE.
	Image string
	// Jobs are further scrape jobs of the same targets at cadences of their own, as
	// production pipelines run them.
	Jobs []MetricsJob
}

// MetricsJob is a scrape job of the agent's targets at a cadence of its own: its
// samples carry job=<Name>, and leave through a remote write of their own. The
// samples of the job "gateway" keep the cadence of the test bed (a scrape every
// second, sent within a second).
type MetricsJob struct {
	// Name is the job's name, the label job of its samples; not "gateway".
	Name string
	// ScrapeInterval is how often it scrapes, e.g. 15s or 30s.
	ScrapeInterval time.Duration
	// BatchSendDeadline is the longest a sample waits in the remote write's queue,
	// e.g. 5s (Prometheus's default).
	BatchSendDeadline time.Duration
	// KeepLabel and KeepRegex, when set, keep only the samples whose label KeepLabel
	// matches KeepRegex (a metric relabelling's keep), e.g. one entry point's.
	KeepLabel, KeepRegex string
}

// InstallMetricsAgent runs the metrics pipeline of a cluster with a node: a real
// Prometheus in agent mode, a pod on the node, which scrapes the targets every second
// and remote-writes every sample, with the external labels, to the bed's Prometheus
// (started with PrometheusOptions.RemoteWriteReceiver), as OCM's observability and
// per-cluster OpenTelemetry collectors write to a central store on the hub. It
// returns once the agent's pod is ready.
func (b *Bed) InstallMetricsAgent(ctx context.Context, cluster string, opts MetricsAgentOptions) error {
	b.mu.Lock()
	c := b.clusterLocked(cluster)
	prom := b.Prometheus
	b.mu.Unlock()
	switch {
	case c == nil || c.node == nil:
		return fmt.Errorf("install the metrics agent on %s: the cluster has no node", cluster)
	case prom == nil:
		return fmt.Errorf("install the metrics agent on %s: the test bed has no Prometheus to write to", cluster)
	case len(opts.Targets) == 0:
		return errors.New("install the metrics agent: no targets to scrape")
	}
	if opts.Image == "" {
		opts.Image = Getenv(PrometheusImageEnv)
	}
	if opts.Image == "" {
		return fmt.Errorf("install the metrics agent on %s: %s is not set ('make prometheus-image' builds the image)", cluster, PrometheusImageEnv)
	}
	config, err := metricsAgentConfig(opts, prom.URL+"/api/v1/write")
	if err != nil {
		return err
	}
	kube, err := kubernetes.NewForConfig(c.Config)
	if err != nil {
		return err
	}
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: MetricsAgentNamespace}}
	if _, err := kube.CoreV1().Namespaces().Create(ctx, ns, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create namespace %s on %s: %w", MetricsAgentNamespace, cluster, err)
	}
	cm := &corev1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: MetricsAgentName, Namespace: MetricsAgentNamespace},
		Data:       map[string]string{"prometheus.yml": string(config)},
	}
	if _, err := kube.CoreV1().ConfigMaps(MetricsAgentNamespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the metrics agent's ConfigMap on %s: %w", cluster, err)
	}
	if _, err := kube.AppsV1().Deployments(MetricsAgentNamespace).Create(ctx, metricsAgentDeployment(opts.Image), metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("create the metrics agent's Deployment on %s: %w", cluster, err)
	}
	return c.WaitDeploymentAvailable(ctx, MetricsAgentNamespace, MetricsAgentName)
}

// metricsAgentConfig is the agent's prometheus.yml: the job "gateway" every second,
// the external labels, and a remote write that sends within a second; and each
// further job with its own cadence and remote write.
func metricsAgentConfig(opts MetricsAgentOptions, remoteWriteURL string) ([]byte, error) {
	static := []map[string]any{{"targets": opts.Targets}}
	scrapes := []map[string]any{{"job_name": "gateway", "static_configs": static}}
	writes := []map[string]any{{
		"name":                  "gateway",
		"url":                   remoteWriteURL,
		"queue_config":          map[string]any{"batch_send_deadline": "1s"},
		"write_relabel_configs": []map[string]any{{"source_labels": []string{"job"}, "regex": "gateway", "action": "keep"}},
	}}
	for _, j := range opts.Jobs {
		if j.Name == "" || j.Name == "gateway" || j.ScrapeInterval < time.Second || j.BatchSendDeadline <= 0 {
			return nil, fmt.Errorf("metrics agent job %q: want a name other than gateway, a scrape interval of at least 1s and a send deadline", j.Name)
		}
		job := map[string]any{"job_name": j.Name, "scrape_interval": model.Duration(j.ScrapeInterval).String(), "static_configs": static}
		if j.KeepLabel != "" {
			job["metric_relabel_configs"] = []map[string]any{{"source_labels": []string{j.KeepLabel}, "regex": j.KeepRegex, "action": "keep"}}
		}
		scrapes = append(scrapes, job)
		writes = append(writes, map[string]any{
			"name":                  j.Name,
			"url":                   remoteWriteURL,
			"queue_config":          map[string]any{"batch_send_deadline": model.Duration(j.BatchSendDeadline).String()},
			"write_relabel_configs": []map[string]any{{"source_labels": []string{"job"}, "regex": regexp.QuoteMeta(j.Name), "action": "keep"}},
		})
	}
	cfg := map[string]any{
		"global": map[string]any{
			"scrape_interval": "1s",
			"external_labels": opts.ExternalLabels,
		},
		"scrape_configs": scrapes,
		"remote_write":   writes,
	}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return nil, fmt.Errorf("write the metrics agent's configuration: %w", err)
	}
	return out, nil
}

// metricsAgentDeployment runs Prometheus in agent mode (no local queries, a
// write-ahead log until the samples are sent) on the pod network, with its
// configuration from the ConfigMap and its WAL in an emptyDir.
func metricsAgentDeployment(image string) *appsv1.Deployment {
	return podDeployment(MetricsAgentNamespace, MetricsAgentName, corev1.PodSpec{
		AutomountServiceAccountToken: ptr.To(false),
		Containers: []corev1.Container{{
			Name:  "prometheus",
			Image: image,
			Args: []string{
				"--agent",
				"--config.file=/etc/prometheus/prometheus.yml",
				"--storage.agent.path=/data",
				fmt.Sprintf("--web.listen-address=:%d", metricsAgentPort),
				"--log.level=warn",
			},
			Ports:          []corev1.ContainerPort{{Name: "web", ContainerPort: metricsAgentPort}},
			ReadinessProbe: HTTPReadiness("/-/ready", intstr.FromString("web")),
			VolumeMounts: []corev1.VolumeMount{
				{Name: "config", MountPath: "/etc/prometheus", ReadOnly: true},
				{Name: "data", MountPath: "/data"},
			},
			SecurityContext: RestrictedSecurityContext(),
		}},
		Volumes: []corev1.Volume{
			{Name: "config", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
				LocalObjectReference: corev1.LocalObjectReference{Name: MetricsAgentName},
			}}},
			{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
		},
	})
}
