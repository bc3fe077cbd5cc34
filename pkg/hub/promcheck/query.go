// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package promcheck

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/prometheus/common/model"

	v1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/shortlist"
)

// maxListedKeys bounds how many label names an error about a missing label lists.
const maxListedKeys = 10

// ClusterInfo is what a query template knows about the draining cluster.
type ClusterInfo struct {
	// Name is the ManagedCluster's name.
	Name string
	// Labels are the labels the cluster's agent reports (cluster_name, cluster_id and
	// those it was configured with), the ones metrics of that cluster carry.
	Labels map[string]string
}

// ObjectInfo names a namespaced object for a query template.
type ObjectInfo struct {
	// Name is the object's name.
	Name string
	// Namespace is the object's namespace.
	Namespace string
}

// QueryData is the data of a query template: {{ .Cluster.Name }},
// {{ index .Cluster.Labels "cluster" }} (or {{ .Cluster.Labels.cluster }}),
// {{ .Gateway.Name }}, {{ .Gateway.Namespace }}, {{ .Policy.Name }} and
// {{ .Policy.Namespace }}. A template names no other field: render refuses it.
type QueryData struct {
	// Cluster is the draining cluster.
	Cluster ClusterInfo
	// Gateway is the policy's target Gateway, in its namespace on the spokes.
	Gateway ObjectInfo
	// Policy is the TrafficMigrationPolicy.
	Policy ObjectInfo
}

// NewQueryData fills in the template data of policy for cluster, so every caller
// resolves the Gateway's namespace the same way.
func NewQueryData(policy *v1alpha1.TrafficMigrationPolicy, cluster ClusterInfo) QueryData {
	return QueryData{
		Cluster: cluster,
		Gateway: ObjectInfo{Name: policy.Spec.TargetRef.Name, Namespace: policy.TargetNamespace()},
		Policy:  ObjectInfo{Name: policy.Name, Namespace: policy.Namespace},
	}
}

// ResolveQuery returns the PromQL query of spec for the cluster in data: metricsQuery
// with its template filled in, or the query built from trafficShare. The same inputs
// always give the same query, so the resolved query shown in the status changes
// only when they do.
//
// A template that refers to something the data lacks fails instead of producing an
// empty value that would silently match other series: missing map keys are errors
// (missingkey=error), and so is `index` of a label the cluster does not report.
//
// Templates run in a sandbox (see render): fields of QueryData, index, quote,
// if/else and eq/ne/and/or/not only, and at most MaxRenderedQueryBytes of output. A
// value printed into metricsQuery without `| quote` must be a plain token (letters,
// digits and _ . : - / @ +), so that no label value a spoke reports can change the
// query's structure; trafficShare.clusterLabelValue is always quoted as a whole.
func ResolveQuery(spec *v1alpha1.TrafficMigrationPolicySpec, data QueryData) (string, error) {
	if spec == nil {
		return "", errors.New("no policy spec")
	}
	if ts := spec.TrafficShare; ts != nil {
		return trafficShareQuery(ts, data)
	}
	if strings.TrimSpace(spec.MetricsQuery) == "" {
		return "", errors.New("neither metricsQuery nor trafficShare is set")
	}
	q, err := render("metricsQuery", spec.MetricsQuery, data, false)
	if err != nil {
		return "", err
	}
	q = strings.TrimSpace(q)
	if q == "" {
		return "", errors.New("metricsQuery is empty once its template is filled in")
	}
	return q, nil
}

// trafficShareQuery builds 100 * sum(rate(M{L="v",S}[w])) / sum(rate(M{S}[w])), the
// denominator compared with minRequestsPerSecond (>= m) when that is set.
func trafficShareQuery(spec *v1alpha1.TrafficShare, data QueryData) (string, error) {
	ts := spec.WithDefaults()
	label, window := ts.ClusterLabel, ts.Window
	if err := checkWindow(window); err != nil {
		return "", err
	}
	value := data.Cluster.Name
	if ts.ClusterLabelValue != "" {
		v, err := render("trafficShare.clusterLabelValue", ts.ClusterLabelValue, data, true)
		if err != nil {
			return "", err
		}
		value = v
	}
	if value == "" {
		// cluster="" would match the series without the label: fail closed.
		return "", fmt.Errorf("the value of label %q for cluster %q is empty; set trafficShare.clusterLabelValue to a template that names the cluster as its metrics do", label, data.Cluster.Name)
	}
	selector := strings.TrimSpace(ts.Selector)

	literal, err := promQuote(value)
	if err != nil {
		return "", &templateError{msg: "trafficShare.clusterLabelValue: " + err.Error()}
	}
	cluster := label + "=" + literal
	if selector != "" {
		cluster += "," + selector
	}
	denominator := trafficShareTotalQuery(&ts)
	if ts.MinRequestsPerSecond > 0 {
		// Under the minimum the comparison drops the total's only sample: no data.
		denominator = fmt.Sprintf("(%s >= %s)", denominator, strconv.FormatFloat(ts.MinRequestsPerSecond, 'g', -1, 64))
	}
	q := fmt.Sprintf("100 * sum(rate(%s{%s}[%s])) / %s", ts.Metric, cluster, window, denominator)
	if len(q) > MaxRenderedQueryBytes {
		// The value's escapes can make the query longer than the value.
		return "", &templateError{msg: "trafficShare: " + errQueryTooLong.Error()}
	}
	return q, nil
}

// trafficShareTotalQuery builds sum(rate(M{S}[w])): the Gateway's traffic in all, the
// denominator of the share, which explains a share with no data under
// minRequestsPerSecond.
func trafficShareTotalQuery(spec *v1alpha1.TrafficShare) string {
	ts := spec.WithDefaults()
	total := ts.Metric
	if selector := strings.TrimSpace(ts.Selector); selector != "" {
		total += "{" + selector + "}"
	}
	return fmt.Sprintf("sum(rate(%s[%s]))", total, ts.Window)
}

// checkWindow fails for a trafficShare.window that Prometheus would refuse in a range
// selector: one its duration parser rejects (units out of order, repeated, unknown,
// or a total it cannot hold), or zero. The CRD refuses all of these too; this keeps a
// policy that was never validated by an API server failing with a clear reason.
func checkWindow(window string) error {
	d, err := model.ParseDuration(window)
	if err != nil {
		return fmt.Errorf("trafficShare.window %q is not a Prometheus duration: %w", window, err)
	}
	if d <= 0 {
		return fmt.Errorf("trafficShare.window %q must be longer than 0s", window)
	}
	return nil
}

// strictIndex replaces the template builtin index for the maps of QueryData: unlike
// the builtin, which returns the zero value for a missing key, it fails, so that
// {{ index .Cluster.Labels "cluster" }} of a cluster without that label is an error
// and not an empty string in the query.
func strictIndex(item any, keys ...any) (any, error) {
	if len(keys) == 0 {
		return nil, errors.New("index needs a key")
	}
	v := reflect.ValueOf(item)
	for _, key := range keys {
		if v.Kind() == reflect.Interface {
			v = v.Elem()
		}
		if v.Kind() != reflect.Map {
			return nil, fmt.Errorf("index works on maps such as .Cluster.Labels, not on %s", kindName(v))
		}
		k := reflect.ValueOf(key)
		if !k.IsValid() || !k.Type().AssignableTo(v.Type().Key()) {
			return nil, fmt.Errorf("index key %v is not a %s", key, v.Type().Key())
		}
		e := v.MapIndex(k)
		if !e.IsValid() {
			return nil, fmt.Errorf("no key %q in %s", fmt.Sprint(key), describeKeys(v))
		}
		v = e
	}
	return v.Interface(), nil
}

func kindName(v reflect.Value) string {
	if !v.IsValid() {
		return "nil"
	}
	return v.Type().String()
}

// describeKeys lists the sorted keys of the map m, a few of them at most.
func describeKeys(m reflect.Value) string {
	if m.Len() == 0 {
		return "the map, which is empty"
	}
	keys := make([]string, 0, m.Len())
	for _, k := range m.MapKeys() {
		keys = append(keys, fmt.Sprint(k.Interface()))
	}
	slices.Sort(keys)
	return "the map; it has " + shortlist.Join(keys, maxListedKeys)
}
