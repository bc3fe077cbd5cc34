// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// shareRow is one row of docs/metrics.md's trafficShare table.
type shareRow struct {
	name, metric, selector string
	labels                 []string // of the example series, in order
	values                 []string
}

var (
	seriesRE = regexp.MustCompile(`^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\}$`)
	labelRE  = regexp.MustCompile(`^([a-zA-Z_][a-zA-Z0-9_]*)="([^"]*)"$`)
)

// trafficShareTable reads the table of docs/metrics.md: the rows whose metric cell
// is code. The test's rows are the doc's, so that the two cannot drift.
func trafficShareTable(t *testing.T) []shareRow {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(docsDir, "metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []shareRow
	for i, line := range strings.Split(string(raw), "\n") {
		cells := strings.Split(strings.Trim(line, "| "), " | ")
		if !strings.HasPrefix(line, "| ") || len(cells) != 5 || !strings.HasPrefix(cells[1], "`") || cells[1] == "`metric`" {
			continue
		}
		code := func(c string) string { return strings.Trim(c, "`") }
		r := shareRow{name: cells[0], metric: code(cells[1]), selector: code(cells[2])}
		m := seriesRE.FindStringSubmatch(code(cells[3]))
		if m == nil || m[1] != r.metric {
			t.Fatalf("metrics.md:%d: the series %s is not one of %s", i+1, cells[3], r.metric)
		}
		for _, pair := range strings.Split(m[2], ",") {
			l := labelRE.FindStringSubmatch(pair)
			if l == nil {
				t.Fatalf("metrics.md:%d: %q is not a label", i+1, pair)
			}
			r.labels, r.values = append(r.labels, l[1]), append(r.values, l[2])
		}
		rows = append(rows, r)
	}
	if len(rows) < 5 {
		t.Fatalf("metrics.md: %d rows in the trafficShare table, want at least 5", len(rows))
	}
	return rows
}

// TestTrafficShareTable serves, for each row of docs/metrics.md's table, the row's
// series as the implementation exports it (the exposition format, with the row's
// labels) for two clusters, 2 and 98 requests a second, plus a series of the same
// metric for the first cluster that the row's selector must leave out; the test bed's
// Prometheus scrapes them, and check, with the row's metric and selector, must find
// that the first cluster carries 2% of the traffic.
func TestTrafficShareTable(t *testing.T) {
	t.Parallel()
	m := newMigration(t, "sharetable")
	for _, row := range trafficShareTable(t) {
		t.Run(row.name, func(t *testing.T) {
			clusterAt := -1
			for i, l := range row.labels {
				if l == "cluster" {
					clusterAt = i
				}
			}
			if clusterAt < 0 {
				t.Fatalf("the series has no cluster label: %v", row.labels)
			}
			src := bed.Prometheus.NewTrafficSource(t, testbed.TrafficOptions{
				Metric: row.metric,
				Labels: append(row.labels, "decoy"),
				Job:    fmt.Sprintf("sharetable-%d", time.Now().UnixNano()),
			})
			series := func(cluster, decoy string) []string {
				v := append([]string(nil), row.values...)
				v[clusterAt] = cluster
				return append(v, decoy)
			}
			src.Set(
				testbed.Rate{Values: series(m.c1, ""), PerSecond: 2},
				testbed.Rate{Values: series(m.c2, ""), PerSecond: 98},
			)
			// A series of the first cluster the selector leaves out: every label of the
			// selector's matchers changed at both ends, so that neither an equality nor
			// an anchored regular expression matches it. Counted, it would make the share
			// about half.
			decoy := series(m.c1, "yes")
			for i, l := range row.labels {
				if strings.Contains(row.selector, l+"=") {
					decoy[i] = "other-" + decoy[i] + "-other"
				}
			}
			src.Set(testbed.Rate{Values: decoy, PerSecond: 100})

			p := m.policy()
			p.Name = "share-" + strings.ToLower(regexp.MustCompile(`[^A-Za-z0-9]+`).ReplaceAllString(row.name, "-"))
			p.Spec.TrafficShare = &trafficv1alpha1.TrafficShare{
				Metric: row.metric,
				// The job keeps the row to its own series: the bed's Prometheus is shared.
				Selector:     row.selector + fmt.Sprintf(",job=%q", src.Job),
				ClusterLabel: "cluster",
				Window:       "4s",
				MaxPercent:   5,
			}
			want := fmt.Sprintf(`100 * sum(rate(%s{%s,job=%q,cluster=%q}[4s])) / sum(rate(%s{%s,job=%q}[4s]))`,
				row.metric, row.selector, src.Job, m.c1, row.metric, row.selector, src.Job)
			waitForPromValueAt(t, want, func() time.Time { return time.Now().Add(-2 * time.Second) }, func(v float64) bool { return v > 1.5 && v < 2.5 })
			manifest := writeManifest(t, p)
			deadline := time.Now().Add(30 * time.Second)
			for {
				r := runCheckJSON(t, bed.Hub.KubeconfigPath, "check", "-f", manifest)
				c1 := reportRow(t, r, m.c1)
				v, err := strconv.ParseFloat(c1.Value, 64)
				if err == nil && v > 1.5 && v < 2.5 && c1.Result == trafficv1alpha1.EvaluationPass {
					assertMatchesPrometheus(t, r, c1)
					return
				}
				if time.Now().After(deadline) {
					t.Fatalf("%s: want a share of about 2%% for %s, passing <= 5: %+v", row.name, m.c1, c1)
				}
				time.Sleep(500 * time.Millisecond) // the next poll; Prometheus scrapes every second
			}
		})
	}
}
