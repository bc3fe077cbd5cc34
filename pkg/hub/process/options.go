// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/tools/leaderelection"

	"open-cluster-management.io/traffic-migration/pkg/probe"
)

const (
	// serviceAccountDir is where Kubernetes mounts a pod's service account. Its token
	// tells that the process runs in a pod; its namespace file names the pod's namespace.
	serviceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

	// DefaultLeaderElectionNamespace holds the leader election Lease when the manager
	// does not run in a pod. It is the namespace OCM installs its hub components in.
	DefaultLeaderElectionNamespace = "open-cluster-management"
	// DefaultLeaderElectionID is the name of the leader election Lease.
	DefaultLeaderElectionID = "traffic-migration-manager"
	// DefaultMemoryLimitRatio leaves a fifth of the container's memory limit to what
	// the Go runtime does not count: above all the program's code and data as mapped
	// from its file, about 50 MiB of the manager's resident memory. With the tenth that
	// Prometheus leaves with the same library, the fleet benchmark's manager, under a
	// 256Mi limit, peaked at 272-278 MiB resident (VmHWM).
	DefaultMemoryLimitRatio = 0.8
)

// Options are the settings of the hub manager process: how it reaches the hub, where it
// serves its metrics and probes, and how replicas elect the one that runs controllers.
type Options struct {
	// Kubeconfig is the path of the hub kubeconfig. Empty means the usual client-go
	// search: $KUBECONFIG, then ~/.kube/config, then the in-cluster service account.
	Kubeconfig string
	// KubeAPIQPS and KubeAPIBurst limit the requests to the hub's API server.
	KubeAPIQPS   float32
	KubeAPIBurst int

	// MetricsBindAddress is host:port of /metrics; "0" disables it.
	MetricsBindAddress string
	// Profiling serves Go's pprof endpoints (/debug/pprof/) beside the metrics.
	Profiling bool
	// HealthProbeBindAddress is host:port of /healthz and /readyz.
	HealthProbeBindAddress string

	// LeaderElect makes replicas elect one leader through a Lease before any controller
	// starts. It defaults to true inside a pod, where several replicas may run.
	LeaderElect bool
	// LeaderElectionNamespace and LeaderElectionID name the Lease.
	LeaderElectionNamespace string
	LeaderElectionID        string
	// LeaseDuration, RenewDeadline and RetryPeriod are the timings of client-go's
	// leader election: how long a lease is valid, how long the leader keeps trying to
	// renew it before it gives up, and how often candidates try.
	LeaseDuration time.Duration
	RenewDeadline time.Duration
	RetryPeriod   time.Duration

	// Workers is the number of parallel workers each controller runs.
	Workers int

	// MemoryLimitRatio is the share of the container's memory limit (its cgroup's)
	// that the Go runtime is given as its soft limit, GOMEMLIMIT, so the garbage
	// collector works harder before the kernel kills the process for memory. 0 turns
	// this off; a GOMEMLIMIT in the environment always wins.
	MemoryLimitRatio float64

	// IdentityTag ends this process's leader election identity (<hostname>_<uuid><tag>),
	// so that another process reading the Lease can tell what its holder runs. It is not
	// a flag: the manager command sets it from what the process runs.
	IdentityTag string

	// OnListening, when set, is called once with the bound addresses of the HTTP
	// servers, before leader election starts. It is not a flag: tests and programs that
	// embed the manager use it to learn ports chosen by the system (":0").
	OnListening func(Addresses)
}

// NewOptions returns the options with their defaults, some of which depend on whether
// the process runs in a pod.
func NewOptions() *Options {
	return newOptions(serviceAccountDir)
}

// newOptions is NewOptions with the service account directory given, so tests can
// pretend to run in a pod.
func newOptions(saDir string) *Options {
	o := &Options{
		KubeAPIQPS:              50,
		KubeAPIBurst:            100,
		MetricsBindAddress:      ":8080",
		HealthProbeBindAddress:  ":8081",
		LeaderElectionNamespace: DefaultLeaderElectionNamespace,
		LeaderElectionID:        DefaultLeaderElectionID,
		LeaseDuration:           15 * time.Second,
		RenewDeadline:           10 * time.Second,
		RetryPeriod:             2 * time.Second,
		Workers:                 4,
		MemoryLimitRatio:        DefaultMemoryLimitRatio,
	}
	if _, err := os.Stat(filepath.Join(saDir, "token")); err == nil {
		o.LeaderElect = true
	}
	if ns := podNamespace(saDir); ns != "" {
		o.LeaderElectionNamespace = ns
	}
	return o
}

// OwnNamespace returns the namespace the manager runs in: its pod's, read from the
// service account Kubernetes mounts, or DefaultLeaderElectionNamespace outside a pod.
// It is the default of the flags that name a namespace of the manager's own, such as
// --leader-election-namespace and --notifications-namespace.
func OwnNamespace() string {
	return ownNamespace(serviceAccountDir)
}

// ownNamespace is OwnNamespace with the service account directory given.
func ownNamespace(saDir string) string {
	if ns := podNamespace(saDir); ns != "" {
		return ns
	}
	return DefaultLeaderElectionNamespace
}

// podNamespace returns the namespace of the pod, from the namespace file of the
// service account directory saDir, or "" when there is none.
func podNamespace(saDir string) string {
	ns, err := os.ReadFile(filepath.Join(saDir, "namespace"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(ns))
}

// AddFlags adds the options' flags, with the current values as defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", o.Kubeconfig,
		"path of the hub kubeconfig; empty: $KUBECONFIG, ~/.kube/config, then the in-cluster service account")
	fs.Float32Var(&o.KubeAPIQPS, "kube-api-qps", o.KubeAPIQPS, "maximum queries per second to the hub's API server")
	fs.IntVar(&o.KubeAPIBurst, "kube-api-burst", o.KubeAPIBurst, "maximum burst of queries to the hub's API server")
	fs.StringVar(&o.MetricsBindAddress, "metrics-bind-address", o.MetricsBindAddress,
		`host:port to serve /metrics on; "0" disables metrics; port 0 picks a free port`)
	fs.BoolVar(&o.Profiling, "profiling", o.Profiling,
		"serve Go's pprof profiles at /debug/pprof/ on the metrics address, to see where memory and CPU go; off by default")
	fs.StringVar(&o.HealthProbeBindAddress, "health-probe-bind-address", o.HealthProbeBindAddress,
		"host:port to serve /healthz and /readyz on; port 0 picks a free port")
	fs.BoolVar(&o.LeaderElect, "leader-elect", o.LeaderElect,
		"elect a leader through a Lease before starting controllers; on by default when running in a pod")
	fs.StringVar(&o.LeaderElectionNamespace, "leader-election-namespace", o.LeaderElectionNamespace,
		"namespace of the leader election Lease; defaults to the pod's own namespace when running in a pod")
	fs.StringVar(&o.LeaderElectionID, "leader-election-id", o.LeaderElectionID, "name of the leader election Lease")
	fs.DurationVar(&o.LeaseDuration, "leader-election-lease-duration", o.LeaseDuration,
		"how long a leader's lease is valid; other candidates wait this long before taking over")
	fs.DurationVar(&o.RenewDeadline, "leader-election-renew-deadline", o.RenewDeadline,
		"how long the leader tries to renew its lease before it gives up leadership and exits")
	fs.DurationVar(&o.RetryPeriod, "leader-election-retry-period", o.RetryPeriod,
		"how often candidates try to acquire or renew the lease")
	fs.IntVar(&o.Workers, "workers", o.Workers, "number of parallel workers of each controller")
	fs.Float64Var(&o.MemoryLimitRatio, "gomemlimit-ratio", o.MemoryLimitRatio,
		"share of the container's memory limit given to the Go runtime as its soft limit (GOMEMLIMIT), so it collects garbage harder before the limit is reached; 0 turns this off, and a GOMEMLIMIT in the environment wins")
}

// Validate checks the options and says which flag is wrong and why.
func (o *Options) Validate() error {
	var errs []error
	if o.Kubeconfig != "" {
		if _, err := os.Stat(o.Kubeconfig); err != nil {
			errs = append(errs, fmt.Errorf("--kubeconfig: %w", err))
		}
	}
	if o.KubeAPIQPS <= 0 {
		errs = append(errs, fmt.Errorf("--kube-api-qps must be greater than 0, not %v", o.KubeAPIQPS))
	}
	if o.KubeAPIBurst < 1 {
		errs = append(errs, fmt.Errorf("--kube-api-burst must be at least 1, not %d", o.KubeAPIBurst))
	}
	if o.Workers < 1 {
		errs = append(errs, fmt.Errorf("--workers must be at least 1, not %d", o.Workers))
	}
	// The negated test also refuses NaN.
	if !(o.MemoryLimitRatio >= 0 && o.MemoryLimitRatio <= 1) {
		errs = append(errs, fmt.Errorf("--gomemlimit-ratio must be from 0 (off) to 1, not %v", o.MemoryLimitRatio))
	}

	metricsErr := probe.ValidateAddress("metrics-bind-address", o.MetricsBindAddress, true)
	healthErr := probe.ValidateAddress("health-probe-bind-address", o.HealthProbeBindAddress, false)
	errs = append(errs, metricsErr, healthErr)
	if o.Profiling && o.MetricsBindAddress == probe.DisabledAddress {
		errs = append(errs, fmt.Errorf("--profiling serves on the metrics address, which --metrics-bind-address=0 disables"))
	}
	if metricsErr == nil && healthErr == nil && o.MetricsBindAddress == o.HealthProbeBindAddress {
		// Both valid and equal, so neither is "0"; equal addresses with port 0 are fine:
		// each listener gets its own port.
		if _, port, _ := net.SplitHostPort(o.MetricsBindAddress); port != "0" {
			errs = append(errs, fmt.Errorf("--metrics-bind-address and --health-probe-bind-address must differ, both are %q", o.MetricsBindAddress))
		}
	}

	if o.LeaderElect {
		errs = append(errs, o.validateLeaderElection()...)
	}
	return errors.Join(errs...)
}

// validateLeaderElection checks the leader election flags, which matter only when
// leader election is on.
func (o *Options) validateLeaderElection() []error {
	var errs []error
	if msgs := validation.IsDNS1123Label(o.LeaderElectionNamespace); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--leader-election-namespace %q is not a namespace name: %s", o.LeaderElectionNamespace, strings.Join(msgs, "; ")))
	}
	if msgs := validation.IsDNS1123Subdomain(o.LeaderElectionID); len(msgs) > 0 {
		errs = append(errs, fmt.Errorf("--leader-election-id %q is not a Lease name: %s", o.LeaderElectionID, strings.Join(msgs, "; ")))
	}
	durations := []struct {
		flag  string
		value time.Duration
	}{
		{"leader-election-lease-duration", o.LeaseDuration},
		{"leader-election-renew-deadline", o.RenewDeadline},
		{"leader-election-retry-period", o.RetryPeriod},
	}
	positive := true
	for _, d := range durations {
		if d.value <= 0 {
			errs = append(errs, fmt.Errorf("--%s must be greater than 0, not %s", d.flag, d.value))
			positive = false
		}
	}
	if !positive {
		return errs
	}
	if o.RenewDeadline >= o.LeaseDuration {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be shorter than --leader-election-lease-duration (%s)", o.RenewDeadline, o.LeaseDuration))
	}
	// client-go retries with up to this much jitter and refuses a deadline that a
	// single jittered retry could overrun.
	if maxRetry := time.Duration(leaderelection.JitterFactor * float64(o.RetryPeriod)); o.RenewDeadline <= maxRetry {
		errs = append(errs, fmt.Errorf("--leader-election-renew-deadline (%s) must be longer than %v times --leader-election-retry-period (%s)", o.RenewDeadline, leaderelection.JitterFactor, o.RetryPeriod))
	}
	return errs
}
