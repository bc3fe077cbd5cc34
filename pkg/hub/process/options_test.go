// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"open-cluster-management.io/traffic-migration/pkg/internal/proctest"
)

func TestNewOptionsDefaults(t *testing.T) {
	tests := map[string]struct {
		files         map[string]string // service account files
		wantElect     bool
		wantNamespace string
	}{
		"outside a pod": {
			wantNamespace: DefaultLeaderElectionNamespace,
		},
		"in a pod": {
			files:         map[string]string{"token": "t", "namespace": "ocm-addons\n"},
			wantElect:     true,
			wantNamespace: "ocm-addons",
		},
		"token without namespace file": {
			files:         map[string]string{"token": "t"},
			wantElect:     true,
			wantNamespace: DefaultLeaderElectionNamespace,
		},
		"blank namespace file": {
			files:         map[string]string{"token": "t", "namespace": "  \n"},
			wantElect:     true,
			wantNamespace: DefaultLeaderElectionNamespace,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			for file, content := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, file), []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			o := newOptions(dir)
			if o.LeaderElect != tc.wantElect {
				t.Errorf("LeaderElect = %v, want %v", o.LeaderElect, tc.wantElect)
			}
			if o.LeaderElectionNamespace != tc.wantNamespace {
				t.Errorf("LeaderElectionNamespace = %q, want %q", o.LeaderElectionNamespace, tc.wantNamespace)
			}
			// The manager's own namespace, the default of --notifications-namespace,
			// is the same.
			if got := ownNamespace(dir); got != tc.wantNamespace {
				t.Errorf("ownNamespace = %q, want %q", got, tc.wantNamespace)
			}
			want := Options{
				KubeAPIQPS:              50,
				KubeAPIBurst:            100,
				MetricsBindAddress:      ":8080",
				HealthProbeBindAddress:  ":8081",
				LeaderElect:             tc.wantElect,
				LeaderElectionNamespace: tc.wantNamespace,
				LeaderElectionID:        "traffic-migration-manager",
				LeaseDuration:           15 * time.Second,
				RenewDeadline:           10 * time.Second,
				RetryPeriod:             2 * time.Second,
				Workers:                 4,
				MemoryLimitRatio:        0.8,
			}
			if !reflect.DeepEqual(*o, want) {
				t.Errorf("defaults = %+v, want %+v", *o, want)
			}
			if err := o.Validate(); err != nil {
				t.Errorf("defaults do not validate: %v", err)
			}
		})
	}
}

func TestAddFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	o := newOptions(t.TempDir())
	fs := pflag.NewFlagSet("manager", pflag.ContinueOnError)
	o.AddFlags(fs)
	err := fs.Parse([]string{
		"--kubeconfig=" + kubeconfig,
		"--kube-api-qps=20", "--kube-api-burst=30",
		"--metrics-bind-address=0", "--health-probe-bind-address=127.0.0.1:9000",
		"--leader-elect", "--leader-election-namespace=hub", "--leader-election-id=tm",
		"--leader-election-lease-duration=30s", "--leader-election-renew-deadline=20s", "--leader-election-retry-period=5s",
		"--workers=8", "--gomemlimit-ratio=0.7",
	})
	if err != nil {
		t.Fatal(err)
	}
	want := Options{
		Kubeconfig:              kubeconfig,
		KubeAPIQPS:              20,
		KubeAPIBurst:            30,
		MetricsBindAddress:      "0",
		HealthProbeBindAddress:  "127.0.0.1:9000",
		LeaderElect:             true,
		LeaderElectionNamespace: "hub",
		LeaderElectionID:        "tm",
		LeaseDuration:           30 * time.Second,
		RenewDeadline:           20 * time.Second,
		RetryPeriod:             5 * time.Second,
		Workers:                 8,
		MemoryLimitRatio:        0.7,
	}
	if !reflect.DeepEqual(*o, want) {
		t.Errorf("parsed = %+v, want %+v", *o, want)
	}
}

func TestValidate(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(kubeconfig, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		mutate  func(o *Options)
		wantErr []string // substrings of the error; none means valid
	}{
		"defaults": {mutate: func(*Options) {}},
		"existing kubeconfig": {
			mutate: func(o *Options) { o.Kubeconfig = kubeconfig },
		},
		"missing kubeconfig": {
			mutate:  func(o *Options) { o.Kubeconfig = kubeconfig + ".missing" },
			wantErr: []string{"--kubeconfig: stat "},
		},
		"metrics disabled": {
			mutate: func(o *Options) { o.MetricsBindAddress = "0" },
		},
		"both on port 0 of one host": {
			mutate: func(o *Options) { o.MetricsBindAddress, o.HealthProbeBindAddress = "127.0.0.1:0", "127.0.0.1:0" },
		},
		"same address": {
			mutate:  func(o *Options) { o.MetricsBindAddress, o.HealthProbeBindAddress = ":9000", ":9000" },
			wantErr: []string{`--metrics-bind-address and --health-probe-bind-address must differ, both are ":9000"`},
		},
		"metrics address without port": {
			mutate:  func(o *Options) { o.MetricsBindAddress = "localhost" },
			wantErr: []string{`--metrics-bind-address "localhost" must be host:port or "0" to disable`},
		},
		"health probes cannot be disabled": {
			mutate:  func(o *Options) { o.HealthProbeBindAddress = "0" },
			wantErr: []string{`--health-probe-bind-address "0" must be host:port: `},
		},
		"port out of range": {
			mutate:  func(o *Options) { o.HealthProbeBindAddress = ":65536" },
			wantErr: []string{`--health-probe-bind-address ":65536": port must be a number from 0 to 65535`},
		},
		"named port": {
			mutate:  func(o *Options) { o.MetricsBindAddress = ":http" },
			wantErr: []string{`--metrics-bind-address ":http": port must be a number`},
		},
		"profiling without metrics": {
			mutate:  func(o *Options) { o.Profiling, o.MetricsBindAddress = true, "0" },
			wantErr: []string{"--profiling serves on the metrics address, which --metrics-bind-address=0 disables"},
		},
		"go memory limit off": {
			mutate: func(o *Options) { o.MemoryLimitRatio = 0 },
		},
		"go memory limit the whole container's": {
			mutate: func(o *Options) { o.MemoryLimitRatio = 1 },
		},
		"go memory limit ratio over 1": {
			mutate:  func(o *Options) { o.MemoryLimitRatio = 1.5 },
			wantErr: []string{"--gomemlimit-ratio must be from 0 (off) to 1, not 1.5"},
		},
		"negative go memory limit ratio": {
			mutate:  func(o *Options) { o.MemoryLimitRatio = -0.1 },
			wantErr: []string{"--gomemlimit-ratio must be from 0 (off) to 1, not -0.1"},
		},
		"no workers": {
			mutate:  func(o *Options) { o.Workers = 0 },
			wantErr: []string{"--workers must be at least 1, not 0"},
		},
		"negative workers": {
			mutate:  func(o *Options) { o.Workers = -2 },
			wantErr: []string{"--workers must be at least 1, not -2"},
		},
		"zero qps and burst": {
			mutate:  func(o *Options) { o.KubeAPIQPS, o.KubeAPIBurst = 0, 0 },
			wantErr: []string{"--kube-api-qps must be greater than 0, not 0", "--kube-api-burst must be at least 1, not 0"},
		},
		"leader election settings ignored when off": {
			mutate: func(o *Options) {
				o.LeaderElect = false
				o.LeaderElectionNamespace, o.LeaseDuration = "", 0
			},
		},
		"bad lease namespace and name": {
			mutate: func(o *Options) {
				o.LeaderElect = true
				o.LeaderElectionNamespace, o.LeaderElectionID = "Hub_NS", "bad/name"
			},
			wantErr: []string{`--leader-election-namespace "Hub_NS" is not a namespace name`, `--leader-election-id "bad/name" is not a Lease name`},
		},
		"empty lease namespace": {
			mutate:  func(o *Options) { o.LeaderElect, o.LeaderElectionNamespace = true, "" },
			wantErr: []string{`--leader-election-namespace "" is not a namespace name`},
		},
		"zero durations": {
			mutate: func(o *Options) {
				o.LeaderElect = true
				o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 0, -time.Second, 0
			},
			wantErr: []string{
				"--leader-election-lease-duration must be greater than 0, not 0s",
				"--leader-election-renew-deadline must be greater than 0, not -1s",
				"--leader-election-retry-period must be greater than 0, not 0s",
			},
		},
		"renew deadline as long as the lease": {
			mutate:  func(o *Options) { o.LeaderElect, o.RenewDeadline = true, 15*time.Second },
			wantErr: []string{"--leader-election-renew-deadline (15s) must be shorter than --leader-election-lease-duration (15s)"},
		},
		"retry period too close to the renew deadline": {
			mutate:  func(o *Options) { o.LeaderElect, o.RetryPeriod = true, 9*time.Second },
			wantErr: []string{"--leader-election-renew-deadline (10s) must be longer than 1.2 times --leader-election-retry-period (9s)"},
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			o := newOptions(t.TempDir())
			tc.mutate(o)
			proctest.CheckErrors(t, o.Validate(), tc.wantErr)
		})
	}
}
