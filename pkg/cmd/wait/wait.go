// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package wait holds the wait command: it blocks until a policy's drain is over, a
// named cluster left its proxy, or a condition holds, so that a pipeline that moves a
// Placement can wait for the old cluster to be free.
package wait

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policywatch"
	"open-cluster-management.io/traffic-migration/pkg/hub/decision"
	"open-cluster-management.io/traffic-migration/pkg/hub/proxy"
)

// Exit codes of wait.
const (
	// ExitDone: what was waited for holds.
	ExitDone = 0
	// ExitTimedOut: --timeout passed first.
	ExitTimedOut = 1
	// ExitError: the wait could not be made (no such policy, no access, a bad flag,
	// a cluster that is not the policy's).
	ExitError = 2
	// ExitStuck: the drain is stuck longer than --grace: a cluster is Held past its
	// deadline, or the policy is not Ready or cannot reach Prometheus.
	ExitStuck = 3
)

// resync is how often the wait looks again at how long the drain has been stuck,
// between changes of the policy and of the real Placement's decisions.
const resync = 5 * time.Second

// ExitCodeError is an error with the exit code the process should end with.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string { return e.Err.Error() }
func (e *ExitCodeError) Unwrap() error { return e.Err }

// ExitCode is the process's exit code for this error.
func (e *ExitCodeError) ExitCode() int { return e.Code }

// condition tells from a policy, and the clusters of its real Placement, whether the
// wait is over, and what to say of where it stands.
type condition struct {
	// what is what is waited for, in words.
	what string
	met  func(p *trafficv1alpha1.TrafficMigrationPolicy, real []string) (bool, string)
	// drain: a wait for the drain to end, which a stuck drain ends (ExitStuck); a
	// wait for a condition is not.
	drain bool
	// cluster is the cluster of removed=CLUSTER, which must be the policy's.
	cluster string
}

// Options are the wait command's flags and where it writes.
type Options struct {
	// hub are kubectl's flags and the clients built from them.
	hub     hubclient.Options
	forArg  string
	timeout time.Duration
	grace   time.Duration
	out     io.Writer
	errOut  io.Writer
	// terminal says whether out is a terminal, where changes are shown with the time
	// of day; elsewhere each change is a line with the full time.
	terminal bool
	// resync is how often the grace is looked at again.
	resync time.Duration
}

// NewCommand returns the wait command. hub are the flags for the hub that the root
// command shares with its commands; nil gives the command flags of its own.
func NewCommand(hub *hubclient.Flags, out, errOut io.Writer) *cobra.Command {
	o := &Options{hub: hubclient.NewOptions(hub, "wait"), out: out, errOut: errOut, timeout: 30 * time.Minute, grace: 10 * time.Minute, forArg: "drained", resync: resync}
	if f, ok := out.(*os.File); ok {
		o.terminal = term.IsTerminal(int(f.Fd()))
	}
	return newCommand(o)
}

func newCommand(o *Options) *cobra.Command {
	if o.hub.Flags == nil {
		o.hub.Flags, o.hub.Verb = &hubclient.Flags{}, "wait"
	}
	if o.errOut == nil {
		o.errOut = io.Discard
	}
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until a policy's drain is over, a cluster left its proxy, or a condition holds",
		Long: `Wait for a TrafficMigrationPolicy, for example in a pipeline that has just moved a
Placement, until what --for names holds:

  drained               the drain is over (the default): the policy's status shows
                        every cluster of the real Placement's current decisions
                        Active and none draining, so a wait started right after a
                        Placement moved does not end before the manager saw the move
  removed=CLUSTER       CLUSTER is in the proxy no more; CLUSTER must be a cluster
                        of the policy (in its status or its real Placement)
  condition=TYPE[=STATUS]
                        the policy's condition TYPE has STATUS (default True), for
                        example condition=Ready or condition=Held=False

The policy's status decides: wait reads only. It exits 0 once that holds, 1 when
--timeout passes first, 2 when it cannot wait (no such policy, no access, a cluster
that is not the policy's), and 3 when a drain is stuck longer than --grace: a cluster
Held past its deadline, or the policy's Ready or PrometheusReachable condition False,
with the reason. --grace=0 waits through these; a wait for a condition never exits
3. Each change of where the drain stands is one line: with the time of day at a
terminal, with the full time elsewhere (a pipeline's log).`,
		Example: `  # After moving the Placement: block until cluster1 is free, for at most an hour
  traffic-migration wait example-traffic-migration -n gateway-system --for=removed=cluster1 --timeout=1h

  # Until no cluster drains
  traffic-migration wait example-traffic-migration -n gateway-system`,
		Args:          cobra.ExactArgs(1),
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			return o.run(cmd.Context(), args[0])
		},
	}
	o.hub.AddTo(cmd)
	cmd.Flags().StringVar(&o.forArg, "for", o.forArg, "what to wait for: drained, removed=CLUSTER, or condition=TYPE[=STATUS]")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "how long to wait at most")
	cmd.Flags().DurationVar(&o.grace, "grace", o.grace, "how long a drain may be stuck (a cluster Held, Ready or PrometheusReachable False) before wait exits 3; 0: wait through it")
	return cmd
}

// parseFor reads --for.
func parseFor(s string) (condition, error) {
	kind, arg, _ := strings.Cut(s, "=")
	switch {
	case kind == "drained" && arg == "":
		return condition{what: "the drain is over", drain: true, met: func(p *trafficv1alpha1.TrafficMigrationPolicy, real []string) (bool, string) {
			if draining := drainingNames(p); len(draining) > 0 {
				return false, "draining: " + strings.Join(draining, ", ")
			}
			if p.Status.ObservedGeneration != p.Generation {
				return false, "the manager has not seen the policy's last change yet"
			}
			if missing := notActive(p, real); len(missing) > 0 {
				return false, "the manager has not seen the real Placement's decisions yet: " + strings.Join(missing, ", ") + " not Active"
			}
			return true, "no cluster drains, and every cluster of the real Placement is Active"
		}}, nil
	case kind == "removed" && arg != "":
		return condition{what: arg + " left the proxy", drain: true, cluster: arg, met: func(p *trafficv1alpha1.TrafficMigrationPolicy, _ []string) (bool, string) {
			for _, r := range p.Status.Clusters {
				if r.Name == arg && r.Phase != trafficv1alpha1.ClusterRemoved {
					return false, arg + " is " + string(r.Phase) + progress(r)
				}
			}
			return true, arg + " is not in the proxy"
		}}, nil
	case kind == "condition" && arg != "":
		typ, status, _ := strings.Cut(arg, "=")
		if status == "" {
			status = string(metav1.ConditionTrue)
		}
		return condition{what: typ + " is " + status, met: func(p *trafficv1alpha1.TrafficMigrationPolicy, _ []string) (bool, string) {
			for _, c := range p.Status.Conditions {
				if c.Type == typ {
					return strings.EqualFold(string(c.Status), status), fmt.Sprintf("%s is %s (%s): %s", c.Type, c.Status, c.Reason, c.Message)
				}
			}
			return false, typ + " is not in the status yet"
		}}, nil
	}
	return condition{}, fmt.Errorf("--for=%q: want drained, removed=CLUSTER or condition=TYPE[=STATUS]", s)
}

// notActive are the clusters of real that the policy's status does not show Active.
func notActive(p *trafficv1alpha1.TrafficMigrationPolicy, real []string) []string {
	active := map[string]bool{}
	for _, r := range p.Status.Clusters {
		active[r.Name] = r.Phase == trafficv1alpha1.ClusterActive
	}
	var out []string
	for _, c := range real {
		if !active[c] {
			out = append(out, c)
		}
	}
	return out
}

// isPolicyCluster reports whether cluster is a cluster of the policy: a row of its
// status (Removed rows stay for a while) or a cluster of its real Placement.
func isPolicyCluster(p *trafficv1alpha1.TrafficMigrationPolicy, real []string, cluster string) bool {
	return slices.Contains(real, cluster) || slices.ContainsFunc(p.Status.Clusters, func(r trafficv1alpha1.ClusterStatus) bool { return r.Name == cluster })
}

// stuck says why the drain is stuck and since when: a cluster Held past its deadline
// (the Held condition), or the Ready or PrometheusReachable condition False; "" when
// it is not.
func stuck(p *trafficv1alpha1.TrafficMigrationPolicy) (why string, since time.Time) {
	for _, c := range p.Status.Conditions {
		bad := (c.Type == trafficv1alpha1.ConditionHeld && c.Status == metav1.ConditionTrue) ||
			((c.Type == trafficv1alpha1.ConditionReady || c.Type == trafficv1alpha1.ConditionPrometheusReachable) && c.Status == metav1.ConditionFalse)
		if bad && (why == "" || c.LastTransitionTime.Time.Before(since)) {
			why, since = fmt.Sprintf("%s is %s (%s): %s", c.Type, c.Status, c.Reason, c.Message), c.LastTransitionTime.Time
		}
	}
	return why, since
}

// drainingNames are the draining and held clusters of a policy's status.
func drainingNames(p *trafficv1alpha1.TrafficMigrationPolicy) []string {
	var names []string
	for _, r := range p.Status.Clusters {
		if r.Phase == trafficv1alpha1.ClusterDraining || r.Phase == trafficv1alpha1.ClusterHeld {
			names = append(names, r.Name+progress(r))
		}
	}
	return names
}

// progress is a draining row's last value, run and estimate, in words.
func progress(r trafficv1alpha1.ClusterStatus) string {
	if r.Phase != trafficv1alpha1.ClusterDraining && r.Phase != trafficv1alpha1.ClusterHeld {
		return ""
	}
	var parts []string
	if r.LastValue != "" {
		parts = append(parts, "last value "+r.LastValue)
	}
	parts = append(parts, fmt.Sprintf("%d passing in a row", r.ConsecutiveSuccesses))
	if r.EstimatedRemovalTime != nil {
		parts = append(parts, "expected out at "+r.EstimatedRemovalTime.UTC().Format(time.RFC3339))
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

func (o *Options) run(ctx context.Context, name string) error {
	fail := func(err error) error { return &ExitCodeError{Code: ExitError, Err: err} }
	cond, err := parseFor(o.forArg)
	if err != nil {
		return fail(err)
	}
	if o.timeout <= 0 {
		return fail(fmt.Errorf("--timeout=%s must be longer than 0s", o.timeout))
	}
	c, namespace, err := o.hub.Clients()
	if err != nil {
		return fail(err)
	}
	ref := namespace + "/" + name
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// One read through the API first, so that a missing CRD, policy or right is an
	// error at once, and to learn the real Placement whose decisions are watched.
	p, err := c.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		return fail(hubclient.PolicyError(c.Traffic.Discovery(), err, "get", namespace, name))
	}
	// Then the policy and, for a drain, the real Placement's decisions, from the
	// watcher's caches on each change of either.
	w := policywatch.New(c, policywatch.Scope{Namespace: namespace, Name: name, Decisions: cond.drain, Placement: p.Spec.PlacementRef.Name}, o.errOut)
	changed, unsubscribe := w.Subscribe()
	defer unsubscribe()
	defer w.Shutdown()
	defer cancel()
	if err := w.Start(ctx); err != nil {
		return fail(err)
	}
	if ctx.Err() != nil {
		return o.ended(ctx.Err(), cond, ref, "")
	}
	if p, err = w.Policy(namespace, name); err != nil {
		return fail(err)
	}
	real, err := realClusters(w, p, cond)
	if err != nil {
		return fail(err)
	}
	if cond.cluster != "" && !isPolicyCluster(p, real, cond.cluster) {
		return fail(fmt.Errorf("%s is not a cluster of trafficmigrationpolicy %s: neither in its status nor in Placement %s (a cluster removed more than %s ago is no longer listed)",
			cond.cluster, ref, p.Spec.PlacementRef.Name, removedRowRetention))
	}
	last := ""
	// seen reports whether the wait is over with p and the real decisions, and shows
	// where it stands when that changed.
	seen := func(p *trafficv1alpha1.TrafficMigrationPolicy, real []string) (bool, error) {
		done, where := cond.met(p, real)
		if where != last {
			if o.terminal {
				fmt.Fprintf(o.out, "%s  %s\n", time.Now().Format(time.TimeOnly), where)
			} else {
				fmt.Fprintf(o.out, "%s  trafficmigrationpolicy %s: %s\n", time.Now().UTC().Format(time.RFC3339), ref, where)
			}
		}
		last = where
		if done || !cond.drain || o.grace <= 0 {
			return done, nil
		}
		if why, since := stuck(p); why != "" && time.Since(since) >= o.grace {
			return false, &ExitCodeError{Code: ExitStuck, Err: fmt.Errorf("trafficmigrationpolicy %s is stuck for %s (--grace %s): %s",
				ref, time.Since(since).Round(time.Second), o.grace, why)}
		}
		return false, nil
	}
	done, err := seen(p, real)
	if err == nil && !done {
		err = o.follow(ctx, w, changed, p, real, ref, cond, seen)
	}
	return o.ended(err, cond, ref, last)
}

// ended is the outcome of a wait that ended with err; last is where it stood.
func (o *Options) ended(err error, cond condition, ref, last string) error {
	var coded *ExitCodeError
	switch {
	case err == nil:
		fmt.Fprintf(o.out, "trafficmigrationpolicy %s: %s\n", ref, cond.what)
		return nil
	case errors.As(err, &coded):
		return err
	case errors.Is(err, context.DeadlineExceeded):
		msg := fmt.Sprintf("timed out after %s waiting until %s in trafficmigrationpolicy %s", o.timeout, cond.what, ref)
		if last != "" {
			msg += "; last: " + last
		}
		return &ExitCodeError{Code: ExitTimedOut, Err: errors.New(msg)}
	default:
		return &ExitCodeError{Code: ExitError, Err: err}
	}
}

// removedRowRetention is how long a Removed row stays in a policy's status.
const removedRowRetention = decision.RemovedRowRetention

// realClusters are the clusters of the policy's real Placement from the watcher's
// cache, for a wait that needs them (drained, removed=CLUSTER); nil for the others.
func realClusters(w *policywatch.Watcher, p *trafficv1alpha1.TrafficMigrationPolicy, cond condition) ([]string, error) {
	if !cond.drain {
		return nil, nil
	}
	decisions, err := w.Decisions(p.Namespace, p.Spec.PlacementRef.Name)
	if err != nil {
		return nil, fmt.Errorf("read the decisions of Placement %s/%s: %w", p.Namespace, p.Spec.PlacementRef.Name, err)
	}
	return proxy.Clusters(decisions), nil
}

// follow follows the policy from p until seen says the wait is over or fails, the
// policy is deleted, or ctx ends (its error then): on each change of the policy or
// of the real Placement's decisions, and every o.resync so that a grace runs out
// without a change.
func (o *Options) follow(ctx context.Context, w *policywatch.Watcher, changed <-chan struct{}, p *trafficv1alpha1.TrafficMigrationPolicy, real []string, ref string,
	cond condition, seen func(*trafficv1alpha1.TrafficMigrationPolicy, []string) (bool, error)) error {
	every := o.resync
	if every <= 0 {
		every = resync
	}
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		case <-changed:
			updated, err := w.Policy(p.Namespace, p.Name)
			var notFound *hubclient.PolicyNotFoundError
			if errors.As(err, &notFound) {
				return fmt.Errorf("trafficmigrationpolicy %s was deleted", ref)
			}
			if err != nil {
				return err
			}
			p = updated
			// A failed read keeps the decisions last read.
			if read, err := realClusters(w, p, cond); err == nil {
				real = read
			}
		}
		if done, err := seen(p, real); done || err != nil {
			return err
		}
	}
}
