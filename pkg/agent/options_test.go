// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package agent

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/spf13/pflag"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

func TestNewOptionsDefaults(t *testing.T) {
	o := NewOptions()
	if o.AddonNamespace != "open-cluster-management-agent-addon" || o.HealthProbeBindAddress != ":8081" {
		t.Errorf("defaults: %+v", o)
	}
	if o.HubKubeconfig != "" || o.Kubeconfig != "" || o.ClusterName != "" || o.MetricsLabels != "" || o.GatewayLabelSelector != "" {
		t.Errorf("unexpected defaults: %+v", o)
	}
}

func TestAddFlags(t *testing.T) {
	o := NewOptions()
	fs := pflag.NewFlagSet("agent", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{
		"--hub-kubeconfig=/hub", "--kubeconfig=/spoke", "--cluster-name=c1", "--addon-namespace=addons",
		"--metrics-labels=region=us-east", "--gateway-label-selector=team=edge", "--health-probe-bind-address=127.0.0.1:0",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		HubKubeconfig: "/hub", Kubeconfig: "/spoke", ClusterName: "c1", AddonNamespace: "addons",
		MetricsLabels: "region=us-east", GatewayLabelSelector: "team=edge", HealthProbeBindAddress: "127.0.0.1:0",
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("got %+v, want %+v", *o, want)
	}
}

func TestValidate(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, []byte("apiVersion: v1\nkind: Config\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	valid := func() *Options {
		o := NewOptions()
		o.HubKubeconfig = kubeconfig
		o.ClusterName = "c1"
		return o
	}
	tests := map[string]struct {
		mutate  func(o *Options)
		wantErr []string // substrings; none means valid
	}{
		"defaults with the required flags": {mutate: func(*Options) {}},
		"everything set": {mutate: func(o *Options) {
			o.Kubeconfig = kubeconfig
			o.MetricsLabels = "cluster=us-east-1,region=us-east"
			o.GatewayLabelSelector = "team in (edge,core),!internal"
			o.HealthProbeBindAddress = "127.0.0.1:0"
		}},
		"no hub kubeconfig": {mutate: func(o *Options) { o.HubKubeconfig = "" }, wantErr: []string{"--hub-kubeconfig is required"}},
		"hub kubeconfig missing": {
			mutate:  func(o *Options) { o.HubKubeconfig = "/does/not/exist" },
			wantErr: []string{"--hub-kubeconfig: stat /does/not/exist"},
		},
		"spoke kubeconfig missing": {
			mutate:  func(o *Options) { o.Kubeconfig = "/does/not/exist" },
			wantErr: []string{"--kubeconfig: stat /does/not/exist"},
		},
		"no cluster name":  {mutate: func(o *Options) { o.ClusterName = "" }, wantErr: []string{"--cluster-name is required"}},
		"bad cluster name": {mutate: func(o *Options) { o.ClusterName = "Cluster_1" }, wantErr: []string{`--cluster-name "Cluster_1" is not a cluster name`}},
		"bad namespace":    {mutate: func(o *Options) { o.AddonNamespace = "" }, wantErr: []string{`--addon-namespace "" is not a namespace name`}},
		"bad labels":       {mutate: func(o *Options) { o.MetricsLabels = "cluster_name=x" }, wantErr: []string{`--metrics-labels: key "cluster_name" is reserved`}},
		"bad selector": {
			mutate:  func(o *Options) { o.GatewayLabelSelector = "team in edge" },
			wantErr: []string{`--gateway-label-selector "team in edge"`},
		},
		"bad address": {
			mutate:  func(o *Options) { o.HealthProbeBindAddress = "8081" },
			wantErr: []string{`--health-probe-bind-address "8081" must be host:port`},
		},
		"bad port": {
			mutate:  func(o *Options) { o.HealthProbeBindAddress = ":http" },
			wantErr: []string{`--health-probe-bind-address ":http": port must be a number`},
		},
		"every error at once": {
			mutate:  func(o *Options) { o.HubKubeconfig, o.ClusterName, o.MetricsLabels = "", "", "x" },
			wantErr: []string{"--hub-kubeconfig is required", "--cluster-name is required", `--metrics-labels: "x" is not key=value`},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := valid()
			tc.mutate(o)
			proctest.CheckErrors(t, o.Validate(), tc.wantErr)
		})
	}
}

func TestParseMetricsLabels(t *testing.T) {
	tests := map[string]struct {
		in      string
		want    map[string]string
		wantErr []string
	}{
		"empty":                  {in: "", want: map[string]string{}},
		"one":                    {in: "cluster=us-east-1", want: map[string]string{"cluster": "us-east-1"}},
		"several":                {in: "cluster=us-east-1,region=us-east", want: map[string]string{"cluster": "us-east-1", "region": "us-east"}},
		"spaces, empty pairs":    {in: " cluster = us-east-1 ,, region=us-east, ", want: map[string]string{"cluster": "us-east-1", "region": "us-east"}},
		"= in a value":           {in: "q=a=b", want: map[string]string{"q": "a=b"}},
		"underscores":            {in: "_private=1,env_name=prod", want: map[string]string{"_private": "1", "env_name": "prod"}},
		"no =":                   {in: "cluster", wantErr: []string{`"cluster" is not key=value`}},
		"empty key":              {in: "=x", wantErr: []string{`key "" must be a label name`}},
		"dash in key":            {in: "my-label=x", wantErr: []string{`key "my-label" must be a label name`}},
		"dot in key":             {in: "topology.kubernetes.io/region=x", wantErr: []string{`key "topology.kubernetes.io/region" must be a label name`}},
		"digit first":            {in: "1st=x", wantErr: []string{`key "1st" must be a label name`}},
		"reserved by Prometheus": {in: "__name__=x", wantErr: []string{`key "__name__": names starting with __ are reserved`}},
		"cluster_name":           {in: "cluster_name=x", wantErr: []string{`key "cluster_name" is reserved`}},
		"cluster_id":             {in: "cluster_id=x", wantErr: []string{`key "cluster_id" is reserved`}},
		"empty value":            {in: "cluster=", wantErr: []string{`key "cluster" has an empty value`}},
		"duplicate":              {in: "cluster=a,region=b,cluster=c", wantErr: []string{`key "cluster" is given more than once`}},
		"several errors":         {in: "a=1,a=2,b", wantErr: []string{`key "a" is given more than once`, `"b" is not key=value`}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := ParseMetricsLabels(tc.in)
			proctest.CheckErrors(t, err, tc.wantErr)
			if len(tc.wantErr) > 0 {
				return
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}
