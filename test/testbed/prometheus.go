// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"
)

// PrometheusOptions configures the test bed's Prometheus.
type PrometheusOptions struct {
	// ScrapeInterval is how often every target is scraped. Default 1s.
	ScrapeInterval time.Duration
	// ScrapeConfigs are the jobs to scrape.
	ScrapeConfigs []ScrapeConfig
	// RuleFiles are rule files (recording and alerting rules) to load.
	RuleFiles []string
	// RemoteWriteReceiver makes Prometheus accept samples that other Prometheus
	// servers or agents remote-write to <URL>/api/v1/write, as a central store on the
	// hub does for the spokes' Prometheus agents (see InstallMetricsAgent).
	RemoteWriteReceiver bool
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
	// URL is Prometheus's address: http://127.0.0.1:<port>, or on a test bed with
	// nodes http://<the bed's host address>:<port>, which the nodes' pods reach.
	URL string
	// Process is the running Prometheus; it changes when Prometheus is started again.
	Process *Process

	dir        string
	configPath string
	host       string
	port       int

	mu   sync.Mutex        // serializes configuration changes
	opts PrometheusOptions // the configuration written last
}

// startPrometheus starts a Prometheus that listens on host.
func startPrometheus(ctx context.Context, dir, host string, opts PrometheusOptions) (*Prometheus, error) {
	dir = filepath.Join(dir, "prometheus")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	p := &Prometheus{URL: "http://" + net.JoinHostPort(host, strconv.Itoa(port)), dir: dir, configPath: filepath.Join(dir, "prometheus.yml"), host: host, port: port}
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
	args := []string{
		"--config.file=" + p.configPath,
		"--storage.tsdb.path=" + filepath.Join(p.dir, "data"),
		"--web.listen-address=" + net.JoinHostPort(p.host, strconv.Itoa(p.port)),
		"--web.enable-lifecycle",
		"--log.level=warn",
	}
	p.mu.Lock()
	if p.opts.RemoteWriteReceiver {
		args = append(args, "--web.enable-remote-write-receiver")
	}
	p.mu.Unlock()
	proc, err := startProcess("prometheus", ProgramPrometheus, p.dir, uniqueLogName(ProgramPrometheus), nil, args...)
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

// SetScrapeConfigs replaces the scrape jobs, those added with AddScrapeJob too, and
// makes Prometheus reload its configuration.
func (p *Prometheus) SetScrapeConfigs(ctx context.Context, opts PrometheusOptions) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.configure(ctx, opts)
}

// AddScrapeJob adds a scrape job, or replaces the job of the same name, keeps the
// others, and makes Prometheus reload its configuration: tests that run in parallel
// each add and remove their own jobs.
func (p *Prometheus) AddScrapeJob(ctx context.Context, job ScrapeConfig) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	opts := p.opts
	opts.ScrapeConfigs = append(slices.DeleteFunc(slices.Clone(opts.ScrapeConfigs), func(j ScrapeConfig) bool {
		return j.JobName == job.JobName
	}), job)
	slices.SortStableFunc(opts.ScrapeConfigs, func(a, b ScrapeConfig) int { return strings.Compare(a.JobName, b.JobName) })
	return p.configure(ctx, opts)
}

// SetRuleFiles replaces the rule files Prometheus loads, keeps the scrape jobs, and
// makes Prometheus reload its configuration.
func (p *Prometheus) SetRuleFiles(ctx context.Context, files []string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	opts := p.opts
	opts.RuleFiles = slices.Clone(files)
	return p.configure(ctx, opts)
}

// RemoveScrapeJob removes the scrape job named name, keeps the others, and makes
// Prometheus reload its configuration.
func (p *Prometheus) RemoveScrapeJob(ctx context.Context, name string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	opts := p.opts
	opts.ScrapeConfigs = slices.DeleteFunc(slices.Clone(opts.ScrapeConfigs), func(j ScrapeConfig) bool { return j.JobName == name })
	return p.configure(ctx, opts)
}

// configure writes opts as the configuration and makes Prometheus reload it. p.mu is held.
func (p *Prometheus) configure(ctx context.Context, opts PrometheusOptions) error {
	if err := p.writeConfig(opts); err != nil {
		return err
	}
	return p.post(ctx, http.MethodPost, "/-/reload")
}

func (p *Prometheus) post(ctx context.Context, method, path string) error {
	return answersOK(ctx, http.DefaultClient, method, p.URL+path)
}

// writeConfig writes opts as Prometheus's configuration file and remembers them.
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
		RuleFiles     []string          `json:"rule_files,omitempty"`
		ScrapeConfigs []scrapeConfig    `json:"scrape_configs"`
	}{Global: map[string]string{"scrape_interval": interval.String(), "evaluation_interval": interval.String()}, RuleFiles: opts.RuleFiles}
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
	if err := os.WriteFile(p.configPath, b, 0o600); err != nil {
		return err
	}
	p.opts = opts
	return nil
}

// ProgramPromtool is Prometheus's promtool, of the same version as ProgramPrometheus,
// which checks and unit-tests rule files.
var ProgramPromtool = Program{Name: "promtool", EnvVar: "TESTBED_PROMTOOL"}
