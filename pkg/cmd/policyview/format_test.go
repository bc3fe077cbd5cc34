// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	"testing"
	"time"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
)

// TestFormat: each formatting rule, as both commands write it.
func TestFormat(t *testing.T) {
	tests := map[string]struct {
		got, want string
	}{
		"duration, seconds":              {Duration(30 * time.Second), "30s"},
		"duration, whole minutes":        {Duration(2 * time.Minute), "2m"},
		"duration, whole hours":          {Duration(24 * time.Hour), "24h"},
		"duration, hours and minutes":    {Duration(90 * time.Minute), "1h30m"},
		"duration, mixed":                {Duration(61 * time.Second), "1m1s"},
		"duration, under a second":       {Duration(1500 * time.Millisecond), "1.5s"},
		"since":                          {Since(now.Add(-190*time.Second), now), "3m10s"},
		"since, a day":                   {Since(now.Add(-25*time.Hour), now), "25h"},
		"since, days":                    {Since(now.Add(-72*time.Hour), now), "3d"},
		"since nothing":                  {Since(time.Time{}, now), "<unknown>"},
		"next check later":               {Until(now.Add(90*time.Second), now), "in 90s"},
		"next check now":                 {Until(now, now), "due"},
		"next check overdue":             {Until(now.Add(-time.Second), now), "due"},
		"value, Prometheus's float":      {Value("2.1000000000000001"), "2.1"},
		"value, six digits":              {Value("0.0123456789"), "0.0123457"},
		"value, large":                   {Value("48.123456789"), "48.1235"},
		"value, integer":                 {Value("40"), "40"},
		"value, NaN":                     {Value("NaN"), "NaN"},
		"value, not a number":            {Value("many"), "many"},
		"number":                         {Number(12.25), "12.25"},
		"check value":                    {CheckValue("3.50", trafficv1alpha1.EvaluationPass), "3.5"},
		"check value, error":             {CheckValue("", trafficv1alpha1.EvaluationError), "error"},
		"check value, no data":           {CheckValue("", trafficv1alpha1.EvaluationNoData), "no data"},
		"check value, NaN and no data":   {CheckValue("NaN", trafficv1alpha1.EvaluationNoData), "NaN"},
		"check value, none":              {CheckValue("", ""), ""},
		"successes, not yet":             {Successes(0, 3), "0/3"},
		"successes, some":                {Successes(2, 3), "2/3"},
		"successes, met":                 {Successes(3, 3), "3/3 met"},
		"successes, run longer than met": {Successes(19, 3), "3/3 met"},
		"successes, nothing needed":      {Successes(0, 0), "0/0"},
		"one line":                       {OneLine("sum(a)\n  / sum(b)\tby (c)"), "sum(a) / sum(b) by (c)"},
		"or none, empty":                 {OrNone(""), "-"},
		"or none, a value":               {OrNone("x"), "x"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}
