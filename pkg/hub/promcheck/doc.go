// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package promcheck checks one draining cluster against Prometheus (the metrics check
// that the removal gate of package decision counts): it reads how to reach
// Prometheus from the policy's Secret and keeps a client per version of it (Clients,
// on ConfigFromSecret and NewClient; the manager, check and dashboard all read the
// Secret through it), fills in the policy's query for the cluster (ResolveQuery) and
// runs it, turning the answer or the failure into an Check that the controller
// records in the cluster's status row and the PrometheusReachable condition.
//
// Run fails closed: anything other than a single readable number is never a
// Pass. It does not apply noDataPolicy; the caller decides what NoData counts as.
//
// Tenants write the query templates and the Secret's url, and spokes report the label
// values, so each is bounded. A template runs in a sandbox: it may read the fields of
// QueryData and use index, quote, if/else and eq/ne/and/or/not, nothing else (no
// range, variables or other functions), and fills in at most MaxRenderedQueryBytes.
// quote writes a value as one PromQL string literal; a value printed without it must
// be a plain token, so that no label value can change the query's structure. An
// answer is read up to Config.MaxAnswerBytes and MaxSeries (AnswerTooLargeError), and
// Config.Allowlist bounds where the client connects (NotAllowedError), down to the
// address of each connection when the allowlist names CIDRs.
package promcheck
