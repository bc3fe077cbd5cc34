// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package dashboard

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	promv1 "github.com/prometheus/client_golang/api/prometheus/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	corev1client "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"

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
	clients *promcheck.Clients
}

func newChartSource(secrets corev1client.SecretsGetter) *chartSource {
	return &chartSource{clients: promcheck.NewClients(secrets, clock.RealClock{}, promcheck.NewClient)}
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
	q, err := s.clients.Get(ctx, p.Namespace, p.Spec.PrometheusSecret.Name)
	var problem *promcheck.SecretError
	if !errors.As(err, &problem) {
		return q, ""
	}
	where := fmt.Sprintf("Secret %s/%s", p.Namespace, problem.Name)
	switch {
	case problem.Reason == trafficv1alpha1.ReasonSecretForbidden:
		return nil, fmt.Sprintf("you may not read the policy's Prometheus %s (that needs get on secrets in %s), so the dashboard cannot ask Prometheus", where, p.Namespace)
	case apierrors.IsNotFound(err):
		return nil, fmt.Sprintf("the policy's Prometheus %s does not exist", where)
	case problem.Reason == trafficv1alpha1.ReasonSecretNotFound:
		return nil, shorten(fmt.Sprintf("read the policy's Prometheus %s: %v", where, problem.Err))
	}
	return nil, shorten(fmt.Sprintf("the policy's Prometheus %s cannot be used: %v", where, problem.Err))
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
