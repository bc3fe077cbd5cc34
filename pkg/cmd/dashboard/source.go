// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// maxPoints bounds the points of one chart's range query.
const maxPoints = 300

// maxNote bounds the text of an error quoted in a chart's note.
const maxNote = 300

// chartSource reads the values of a policy's charts from Prometheus, through the
// policy's Secret and the manager's own client code (package promcheck), where the
// user may read that Secret.
type chartSource struct {
	secrets corev1client.SecretsGetter
	// newQuerier builds the client of a Secret; promcheck.NewRangeQuerier outside tests.
	newQuerier func(cfg promcheck.Config) (promcheck.RangeQuerier, error)

	mu sync.Mutex
	// queriers holds one client per Secret, built from the version in rv.
	queriers map[string]querierEntry
}

type querierEntry struct {
	rv      string
	querier promcheck.RangeQuerier
}

func newChartSource(secrets corev1client.SecretsGetter) *chartSource {
	return &chartSource{secrets: secrets, newQuerier: promcheck.NewRangeQuerier, queriers: map[string]querierEntry{}}
}

// inputs reads the values of every chart of p's page from Prometheus. When the
// Secret cannot be read or used, or a query fails, the chart's input says why, and
// the chart is drawn from the status history instead.
func (s *chartSource) inputs(ctx context.Context, p *trafficv1alpha1.TrafficMigrationPolicy, now time.Time) map[string]chartInput {
	out := map[string]chartInput{}
	var rows []trafficv1alpha1.ClusterStatus
	for _, row := range p.Status.Clusters {
		if charted(row) {
			rows = append(rows, row)
		}
	}
	if len(rows) == 0 {
		return out
	}
	q, note := s.querier(ctx, p)
	for _, row := range rows {
		switch {
		case q == nil:
			out[row.Name] = chartInput{note: note}
		case row.ResolvedQuery == "":
			out[row.Name] = chartInput{note: "the cluster has not been checked yet, so there is no query to chart"}
		default:
			out[row.Name] = rangeOf(ctx, q, row, now)
		}
	}
	return out
}

// querier returns the Prometheus client of p's Secret, or nil and why there is none.
func (s *chartSource) querier(ctx context.Context, p *trafficv1alpha1.TrafficMigrationPolicy) (promcheck.RangeQuerier, string) {
	name := p.Spec.PrometheusSecret.Name
	where := fmt.Sprintf("Secret %s/%s", p.Namespace, name)
	secret, err := s.secrets.Secrets(p.Namespace).Get(ctx, name, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return nil, fmt.Sprintf("you may not read the policy's Prometheus %s (that needs get on secrets in %s), so the dashboard cannot ask Prometheus", where, p.Namespace)
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("the policy's Prometheus %s does not exist", where)
	case err != nil:
		return nil, shorten(fmt.Sprintf("read the policy's Prometheus %s: %v", where, err))
	}
	return s.cached(secret, where)
}

// cached returns the client of secret, built anew when the Secret changed.
func (s *chartSource) cached(secret *corev1.Secret, where string) (promcheck.RangeQuerier, string) {
	key := secret.Namespace + "/" + secret.Name
	version := string(secret.UID) + "/" + secret.ResourceVersion
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.queriers[key]; ok && e.rv == version {
		return e.querier, ""
	}
	delete(s.queriers, key)
	cfg, err := promcheck.ConfigFromSecret(secret)
	if err != nil {
		return nil, shorten(fmt.Sprintf("the policy's Prometheus %s cannot be used: %v", where, err))
	}
	q, err := s.newQuerier(cfg)
	if err != nil {
		return nil, shorten(fmt.Sprintf("the policy's Prometheus %s cannot be used: %v", where, err))
	}
	s.queriers[key] = querierEntry{rv: version, querier: q}
	return q, ""
}

// rangeOf runs the range query of one cluster's chart.
func rangeOf(ctx context.Context, q promcheck.RangeQuerier, row trafficv1alpha1.ClusterStatus, now time.Time) chartInput {
	r := chartRange(row, now)
	v, err := q.QueryRange(ctx, row.ResolvedQuery, r)
	if err != nil {
		return chartInput{note: shorten(fmt.Sprintf("the range query failed: %v", err))}
	}
	values, note := seriesFromMatrix(v)
	if values == nil {
		return chartInput{note: note}
	}
	return chartInput{prometheus: values, note: note}
}

// chartRange is the span a cluster's chart shows: from a while before its drain
// started (a quarter of the drain, between 30s and 30m) to its removal, or now, at
// most maxPoints steps of whole seconds.
func chartRange(row trafficv1alpha1.ClusterStatus, now time.Time) promv1.Range {
	start := row.DrainStartTime.Time
	end := now
	if row.RemovalTime != nil && row.RemovalTime.Time.Before(now) {
		end = row.RemovalTime.Add(10 * time.Second)
		if end.After(now) {
			end = now
		}
	}
	lead := min(max(end.Sub(start)/4, 30*time.Second), 30*time.Minute)
	start = start.Add(-lead)
	step := max((end.Sub(start) / maxPoints).Truncate(time.Second), time.Second)
	return promv1.Range{Start: start, End: end, Step: step}
}

// shorten bounds a note's length.
func shorten(s string) string {
	if len(s) <= maxNote {
		return s
	}
	return strings.ToValidUTF8(s[:maxNote], "") + "..."
}
