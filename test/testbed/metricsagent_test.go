// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"testing"
	"time"

	"sigs.k8s.io/yaml"
)

// agentConfig is the part of a Prometheus configuration that metricsAgentConfig
// writes and the test reads back.
type agentConfig struct {
	Scrapes []struct {
		Job      string `json:"job_name"`
		Interval string `json:"scrape_interval"`
		Relabel  []struct {
			Labels []string `json:"source_labels"`
			Regex  string   `json:"regex"`
			Action string   `json:"action"`
		} `json:"metric_relabel_configs"`
	} `json:"scrape_configs"`
	Writes []struct {
		Name  string `json:"name"`
		Queue struct {
			Deadline string `json:"batch_send_deadline"`
		} `json:"queue_config"`
		Relabel []struct {
			Labels []string `json:"source_labels"`
			Regex  string   `json:"regex"`
			Action string   `json:"action"`
		} `json:"write_relabel_configs"`
	} `json:"remote_write"`
}

// TestMetricsAgentJobs: each further job scrapes at its own interval, keeps only the
// series its label selects, and has a remote write of its own that sends only its
// series, within its own deadline; the default job's remote write sends only its own.
func TestMetricsAgentJobs(t *testing.T) {
	raw, err := metricsAgentConfig(MetricsAgentOptions{Targets: []string{"traefik:9100"}, Jobs: []MetricsJob{
		{Name: "gateway-a.b", ScrapeInterval: 15 * time.Second, BatchSendDeadline: 5 * time.Second, KeepLabel: "entrypoint", KeepRegex: "a"},
	}}, "http://hub/api/v1/write")
	if err != nil {
		t.Fatal(err)
	}
	var cfg agentConfig
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("%v in\n%s", err, raw)
	}
	if len(cfg.Scrapes) != 2 || len(cfg.Writes) != 2 {
		t.Fatalf("want two scrape jobs and two remote writes:\n%s", raw)
	}
	if s := cfg.Scrapes[1]; s.Job != "gateway-a.b" || s.Interval != "15s" || len(s.Relabel) != 1 || s.Relabel[0].Regex != "a" || s.Relabel[0].Action != "keep" {
		t.Errorf("the further job's scrape: %+v", s)
	}
	for i, want := range []struct{ name, regex, deadline string }{{"gateway", "gateway", "1s"}, {"gateway-a.b", `gateway-a\.b`, "5s"}} {
		w := cfg.Writes[i]
		if w.Name != want.name || w.Queue.Deadline != want.deadline || len(w.Relabel) != 1 || w.Relabel[0].Regex != want.regex ||
			w.Relabel[0].Action != "keep" || len(w.Relabel[0].Labels) != 1 || w.Relabel[0].Labels[0] != "job" {
			t.Errorf("remote write %d: %+v, want %+v", i, w, want)
		}
	}
	for _, bad := range []MetricsJob{
		{Name: "gateway", ScrapeInterval: time.Second, BatchSendDeadline: time.Second},
		{Name: "fast", ScrapeInterval: 500 * time.Millisecond, BatchSendDeadline: time.Second},
		{Name: "nodeadline", ScrapeInterval: time.Second},
	} {
		if _, err := metricsAgentConfig(MetricsAgentOptions{Jobs: []MetricsJob{bad}}, "http://hub/api/v1/write"); err == nil {
			t.Errorf("job %+v: no error", bad)
		}
	}
}
