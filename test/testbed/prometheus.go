// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"
)

// PrometheusOptions configures the test bed's Prometheus.
type PrometheusOptions struct {
	// ScrapeInterval is how often every target is scraped. Default 1s.
	ScrapeInterval time.Duration
	// ScrapeConfigs are the jobs to scrape.
	ScrapeConfigs []ScrapeConfig
}

// ScrapeConfig is one scrape job of static targets.
type ScrapeConfig struct {
	// JobName names the job; it becomes the job label.
	JobName string
	// Targets are host:port addresses to scrape.
	Targets []string
	// MetricsPath is the path to scrape. Default /metrics.
	MetricsPath string
	// Labels are added to every series of the job's targets.
	Labels map[string]string
	// HonorLabels keeps the target's labels where they clash with the job's.
	HonorLabels bool
}

// Prometheus is a real Prometheus 3 run by the test bed.
type Prometheus struct {
	// URL is Prometheus's address, http://127.0.0.1:<port>.
	URL string
	// Process is the running Prometheus; it changes when Prometheus is started again.
	Process *Process

	dir        string
	configPath string
	port       int
}

func startPrometheus(ctx context.Context, dir string, opts PrometheusOptions) (*Prometheus, error) {
	dir = filepath.Join(dir, "prometheus")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &Prometheus{URL: "http://" + hostPort(port), dir: dir, configPath: filepath.Join(dir, "prometheus.yml"), port: port}
	if err := p.writeConfig(opts); err != nil {
		return nil, err
	}
	return p, p.Start(ctx)
}

// Start starts Prometheus, again after Stop, on the same address and with the same
// data, and waits until it is ready.
func (p *Prometheus) Start(ctx context.Context) error {
	if p.Process != nil && !p.Process.Exited() {
		return fmt.Errorf("prometheus is already running")
	}
	proc, err := startProcess("prometheus", ProgramPrometheus, p.dir, fmt.Sprintf("prometheus-%d", time.Now().UnixNano()),
		"--config.file="+p.configPath,
		"--storage.tsdb.path="+filepath.Join(p.dir, "data"),
		"--web.listen-address="+hostPort(p.port),
		"--web.enable-lifecycle",
		"--log.level=warn",
	)
	if err != nil {
		return err
	}
	p.Process = proc
	err = proc.waitReady(ctx, 60*time.Second, func(ctx context.Context) error {
		return p.post(ctx, http.MethodGet, "/-/ready")
	})
	if err != nil {
		proc.Stop()
	}
	return err
}

// Stop stops Prometheus; Start starts it again.
func (p *Prometheus) Stop() {
	if p.Process != nil {
		p.Process.Stop()
	}
}

// SetScrapeConfigs replaces the scrape jobs and makes Prometheus reload its configuration.
func (p *Prometheus) SetScrapeConfigs(ctx context.Context, opts PrometheusOptions) error {
	if err := p.writeConfig(opts); err != nil {
		return err
	}
	return p.post(ctx, http.MethodPost, "/-/reload")
}

func (p *Prometheus) post(ctx context.Context, method, path string) error {
	req, err := http.NewRequestWithContext(ctx, method, p.URL+path, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s answered %s", method, path, resp.Status)
	}
	return nil
}

func (p *Prometheus) writeConfig(opts PrometheusOptions) error {
	interval := opts.ScrapeInterval
	if interval == 0 {
		interval = time.Second
	}
	type staticConfig struct {
		Targets []string          `json:"targets"`
		Labels  map[string]string `json:"labels,omitempty"`
	}
	type scrapeConfig struct {
		JobName       string         `json:"job_name"`
		MetricsPath   string         `json:"metrics_path,omitempty"`
		HonorLabels   bool           `json:"honor_labels,omitempty"`
		StaticConfigs []staticConfig `json:"static_configs"`
	}
	cfg := struct {
		Global        map[string]string `json:"global"`
		ScrapeConfigs []scrapeConfig    `json:"scrape_configs"`
	}{Global: map[string]string{"scrape_interval": interval.String(), "evaluation_interval": interval.String()}}
	for _, sc := range opts.ScrapeConfigs {
		cfg.ScrapeConfigs = append(cfg.ScrapeConfigs, scrapeConfig{
			JobName:       sc.JobName,
			MetricsPath:   sc.MetricsPath,
			HonorLabels:   sc.HonorLabels,
			StaticConfigs: []staticConfig{{Targets: sc.Targets, Labels: sc.Labels}},
		})
	}
	b, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(p.configPath, b, 0o600)
}
