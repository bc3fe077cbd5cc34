// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// trafficTick is how often a TrafficSource's counters grow.
const trafficTick = 50 * time.Millisecond

// TrafficOptions says what a TrafficSource serves.
type TrafficOptions struct {
	// Metric names the request counter, for example "test_gateway_requests_total".
	Metric string
	// Labels name the counter's labels, for example "cluster"; a Rate gives their
	// values in this order.
	Labels []string
	// Job names the scrape job, which becomes the job label of every series of the
	// source. Default: "traffic-" and a number of its own.
	Job string
}

// TrafficSource plays the request metrics of Gateways: a request counter per
// combination of label values that grows at the rate the test sets, served over HTTP
// and scraped by the test bed's Prometheus under a job of its own until the test ends.
type TrafficSource struct {
	// Job is the scrape job, and so the job label of the source's series: a query
	// selects them with job="<Job>".
	Job string

	requests *prometheus.CounterVec
	mu       sync.Mutex
	rates    map[string]Rate // by their label values, joined
}

// Rate is the request rate of one series of a TrafficSource.
type Rate struct {
	// Values are the series' label values, in the order of TrafficOptions.Labels.
	Values []string
	// PerSecond is how many requests the series counts per second.
	PerSecond float64
}

// NewTrafficSource serves a request counter on a loopback port and makes Prometheus
// scrape it, beside the other jobs, until the test ends. Every series counts nothing
// until Set gives it a rate.
func (p *Prometheus) NewTrafficSource(t testing.TB, opts TrafficOptions) *TrafficSource {
	t.Helper()
	if opts.Job == "" {
		opts.Job = fmt.Sprintf("traffic-%d", time.Now().UnixNano())
	}
	s := &TrafficSource{
		Job:   opts.Job,
		rates: map[string]Rate{},
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: opts.Metric,
			Help: "Requests served by the gateway.",
		}, opts.Labels),
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(s.requests)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: promhttp.HandlerFor(reg, promhttp.HandlerOpts{}), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()

	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		ticker := time.NewTicker(trafficTick)
		defer ticker.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
				s.mu.Lock()
				for _, r := range s.rates {
					s.requests.WithLabelValues(r.Values...).Add(r.PerSecond * trafficTick.Seconds())
				}
				s.mu.Unlock()
			}
		}
	})
	stop := func() {
		cancel()
		wg.Wait()
		_ = srv.Close()
	}
	scrapeCtx, scrapeCancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer scrapeCancel()
	if err := p.AddScrapeJob(scrapeCtx, ScrapeConfig{JobName: s.Job, Targets: []string{l.Addr().String()}}); err != nil {
		stop()
		t.Fatalf("make Prometheus scrape the traffic source: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if err := p.RemoveScrapeJob(ctx, s.Job); err != nil {
			t.Logf("stop Prometheus scraping the traffic source: %v", err)
		}
		stop()
	})
	return s
}

// SetByValue sets the request rates of a source with one label, by the label's value,
// all at once, as Set does.
func (s *TrafficSource) SetByValue(rates map[string]float64) {
	all := make([]Rate, 0, len(rates))
	for value, rate := range rates {
		all = append(all, Rate{Values: []string{value}, PerSecond: rate})
	}
	s.Set(all...)
}

// Set sets request rates, all at once: no tick of the counters sees some of them
// changed and not the others. A series gets its rate from the next tick on, and is
// served from now on even at rate 0.
func (s *TrafficSource) Set(rates ...Rate) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range rates {
		r.Values = slices.Clone(r.Values)
		s.rates[strings.Join(r.Values, "\x00")] = r
		s.requests.WithLabelValues(r.Values...).Add(0)
	}
}
