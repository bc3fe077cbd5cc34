// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package gate checks one draining cluster against Prometheus: it reads how to reach
// Prometheus from the policy's Secret (ConfigFromSecret), builds a client
// (NewQuerier), fills in the policy's query for the cluster (ResolveQuery) and runs
// it, turning the answer or the failure into an Evaluation that the controller
// records in the cluster's status row and the PrometheusReachable condition.
//
// Evaluate fails closed: anything other than a single readable number is never a
// Pass. It does not apply noDataPolicy; the caller decides what NoData counts as.
package gate
