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
	"strings"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	trafficv1alpha1client "open-cluster-management.io/traffic-migration/pkg/client/clientset/versioned/typed/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
)

// Exit codes of wait.
const (
	// ExitDone: what was waited for holds.
	ExitDone = 0
	// ExitTimedOut: --timeout passed first.
	ExitTimedOut = 1
	// ExitError: the wait could not be made (no such policy, no access, a bad flag).
	ExitError = 2
)

// ExitCodeError is an error with the exit code the process should end with.
type ExitCodeError struct {
	Code int
	Err  error
}

func (e *ExitCodeError) Error() string { return e.Err.Error() }
func (e *ExitCodeError) Unwrap() error { return e.Err }

// ExitCode is the process's exit code for this error.
func (e *ExitCodeError) ExitCode() int { return e.Code }

// userAgent is how the hub's audit log names the CLI's requests.
const userAgent = "traffic-migration-cli"

// condition tells from a policy whether the wait is over, and what to say of where it
// stands.
type condition struct {
	// what is what is waited for, in words.
	what string
	met  func(*trafficv1alpha1.TrafficMigrationPolicy) (bool, string)
}

// Options are the wait command's flags and where it writes.
type Options struct {
	flags   hubclient.Flags
	forArg  string
	timeout time.Duration
	out     io.Writer
	// terminal says whether out is a terminal, where progress is shown.
	terminal bool
	// policies returns the client of the policies and their namespace.
	policies func() (trafficv1alpha1client.TrafficMigrationPolicyInterface, string, error)
}

// NewCommand returns the wait command.
func NewCommand(out io.Writer) *cobra.Command {
	o := &Options{out: out, timeout: 30 * time.Minute, forArg: "drained"}
	if f, ok := out.(*os.File); ok {
		o.terminal = term.IsTerminal(int(f.Fd()))
	}
	o.policies = func() (trafficv1alpha1client.TrafficMigrationPolicyInterface, string, error) {
		clients, namespace, err := o.flags.Clients(userAgent)
		if err != nil {
			return nil, "", err
		}
		return clients.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace), namespace, nil
	}
	return newCommand(o)
}

func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "wait NAME",
		Short: "Wait until a policy's drain is over, a cluster left its proxy, or a condition holds",
		Long: `Wait for a TrafficMigrationPolicy, for example in a pipeline that has just moved a
Placement, until what --for names holds:

  drained               no cluster drains (the default): every cluster that left the
                        real Placement has left the proxy too
  removed=CLUSTER       CLUSTER is in the proxy no more
  condition=TYPE[=STATUS]
                        the policy's condition TYPE has STATUS (default True), for
                        example condition=Ready or condition=Held=False

The policy's status decides: wait reads only. It exits 0 once that holds, 1 when
--timeout passes first, and 2 when it cannot wait (no such policy, no access). At a
terminal it shows each change of where the drain stands; elsewhere it prints one line
at the end.`,
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
	o.flags.AddFlags(cmd.Flags())
	cmd.Flags().StringVar(&o.forArg, "for", o.forArg, "what to wait for: drained, removed=CLUSTER, or condition=TYPE[=STATUS]")
	cmd.Flags().DurationVar(&o.timeout, "timeout", o.timeout, "how long to wait at most")
	return cmd
}

// parseFor reads --for.
func parseFor(s string) (condition, error) {
	kind, arg, _ := strings.Cut(s, "=")
	switch {
	case kind == "drained" && arg == "":
		return condition{what: "no cluster drains", met: func(p *trafficv1alpha1.TrafficMigrationPolicy) (bool, string) {
			draining := drainingNames(p)
			if len(draining) == 0 && p.Status.ObservedGeneration == p.Generation {
				return true, "no cluster drains"
			}
			return false, "draining: " + strings.Join(draining, ", ")
		}}, nil
	case kind == "removed" && arg != "":
		return condition{what: arg + " left the proxy", met: func(p *trafficv1alpha1.TrafficMigrationPolicy) (bool, string) {
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
		return condition{what: typ + " is " + status, met: func(p *trafficv1alpha1.TrafficMigrationPolicy) (bool, string) {
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
	policies, namespace, err := o.policies()
	if err != nil {
		return fail(err)
	}
	ref := namespace + "/" + name
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	// The policy now, then each change of it: a watch from the resourceVersion read,
	// which RetryWatcher resumes when the API server ends it.
	p, err := policies.Get(ctx, name, metav1.GetOptions{})
	if err != nil {
		if apierrors.IsNotFound(err) {
			return fail(fmt.Errorf("trafficmigrationpolicy %s not found", ref))
		}
		return fail(fmt.Errorf("read trafficmigrationpolicy %s: %w", ref, err))
	}
	last := ""
	// seen reports whether the wait is over with p, and shows where it stands.
	seen := func(p *trafficv1alpha1.TrafficMigrationPolicy) bool {
		done, where := cond.met(p)
		if o.terminal && where != last {
			fmt.Fprintf(o.out, "%s  %s\n", time.Now().Format(time.TimeOnly), where)
		}
		last = where
		return done
	}
	err = nil
	if !seen(p) {
		err = o.watch(ctx, policies, name, p.ResourceVersion, ref, seen)
	}
	switch {
	case err == nil:
		fmt.Fprintf(o.out, "trafficmigrationpolicy %s: %s\n", ref, cond.what)
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		msg := fmt.Sprintf("timed out after %s waiting until %s in trafficmigrationpolicy %s", o.timeout, cond.what, ref)
		if last != "" {
			msg += "; last: " + last
		}
		return &ExitCodeError{Code: ExitTimedOut, Err: errors.New(msg)}
	default:
		return fail(err)
	}
}

// watch follows the policy from resourceVersion until seen says the wait is over, the
// policy is deleted, or ctx ends (its error then).
func (o *Options) watch(ctx context.Context, policies trafficv1alpha1client.TrafficMigrationPolicyInterface, name, resourceVersion, ref string,
	seen func(*trafficv1alpha1.TrafficMigrationPolicy) bool) error {
	selector := fields.OneTermEqualSelector("metadata.name", name).String()
	lw := &cache.ListWatch{
		WatchFuncWithContext: func(ctx context.Context, options metav1.ListOptions) (watch.Interface, error) {
			options.FieldSelector = selector
			return policies.Watch(ctx, options)
		},
	}
	w, err := watchtools.NewRetryWatcherWithContext(ctx, resourceVersion, lw)
	if err != nil {
		return err
	}
	defer w.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case ev, ok := <-w.ResultChan():
			if !ok {
				return fmt.Errorf("the watch of trafficmigrationpolicy %s ended", ref)
			}
			switch ev.Type {
			case watch.Deleted:
				return fmt.Errorf("trafficmigrationpolicy %s was deleted", ref)
			case watch.Error:
				return fmt.Errorf("watch trafficmigrationpolicy %s: %v", ref, apierrors.FromObject(ev.Object))
			}
			if p, ok := ev.Object.(*trafficv1alpha1.TrafficMigrationPolicy); ok && seen(p) {
				return nil
			}
		}
	}
}
