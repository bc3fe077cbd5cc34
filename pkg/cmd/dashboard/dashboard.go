// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package dashboard is the "traffic-migration dashboard" command: a local, read-only
// web UI of the hub's TrafficMigrationPolicies, with a live chart of every drain.
//
// The command watches the policies through an informer and serves, on a loopback
// address, the fleet page and a page per policy. A policy page has, for each
// draining cluster, its checked value over time against the threshold, its checks as
// passed or failed points, and the drain's start, the end of minDrainDuration and the
// removal. The values come from Prometheus, through the policy's Secret and the
// manager's own client (package promcheck), where the user may read the Secret, and from
// the check history in the policy's status otherwise. Pages follow the watch through
// server-sent events. A page's data is the view of package policyview, the one the
// status command renders, plus the charts, with every text formatted: the browser
// only draws it. Everything the browser loads is embedded in the binary.
package dashboard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policywatch"
)

// DefaultAddress is where the dashboard listens unless --address says otherwise.
const DefaultAddress = "localhost:3100"

// Options are the flags of the dashboard command.
type Options struct {
	// Hub finds the hub's kubeconfig and the namespace of the policies to show, and
	// has the clients built from them.
	Hub hubclient.Options
	// AllNamespaces shows the policies of every namespace.
	AllNamespaces bool
	// Address is the host:port to listen on.
	Address string

	Out    io.Writer
	ErrOut io.Writer

	// listening is called with the address the server listens on, once it does.
	listening func(addr string)
}

// NewOptions returns the default options, reading the hub through hub, the flags the
// root command shares with its commands (nil gives them flags of their own), and
// writing to out and errOut.
func NewOptions(hub *hubclient.Flags, out, errOut io.Writer) *Options {
	return &Options{Hub: hubclient.NewOptions(hub, "dashboard"), Address: DefaultAddress, Out: out, ErrOut: errOut, listening: func(string) {}}
}

// NewCommand returns the dashboard command. hub are the flags for the hub that the
// root command shares with its commands; nil gives the command flags of its own.
func NewCommand(hub *hubclient.Flags, out, errOut io.Writer) *cobra.Command {
	return newCommand(NewOptions(hub, out, errOut))
}

func newCommand(o *Options) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve a local web dashboard with live charts of every drain",
		Long: `Serve a read-only web dashboard of the TrafficMigrationPolicies on an Open Cluster
Management hub, on this machine, for the person who runs it.

The fleet page lists the policies of the namespace (of every namespace with -A):
their Ready state, proxy Placement, active and draining clusters, and their clusters
by phase. A policy's page has a chart for each
draining cluster: its checked value over time against the threshold line, the checks
marked as passed or failed, the drain's start, the end of minDrainDuration and the
removal. Pages update live, without a reload, as the hub changes.

Where you may read the policy's Prometheus Secret, the chart's values come from
Prometheus: a range query of the cluster's resolved query, made with the manager's
own client code. Otherwise they come from the check history in the policy's status,
and the page says so. The dashboard only reads: it watches policies and gets Secrets.

It listens on localhost:3100 unless --address says otherwise, and answers only
requests addressed to localhost or to that address. Everything it serves is part of
the binary: it needs nothing from the internet.`,
		Example: `  # The dashboard of every namespace, at http://localhost:3100
  traffic-migration dashboard -A

  # One namespace, on another port
  traffic-migration dashboard -n gateway-system --address localhost:8080`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	cmd.SetOut(o.Out)
	cmd.SetErr(o.ErrOut)
	o.AddFlags(cmd)
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		return o.ValidateAndRun(cmd.Context())
	}
	return cmd
}

// AddFlags adds the command's flags to cmd.
func (o *Options) AddFlags(cmd *cobra.Command) {
	o.Hub.AddTo(cmd)
	fs := cmd.Flags()
	fs.BoolVarP(&o.AllNamespaces, "all-namespaces", "A", o.AllNamespaces, "show the policies of every namespace")
	fs.StringVar(&o.Address, "address", o.Address, "the host:port to serve the dashboard on")
}

// Validate checks the flags.
func (o *Options) Validate() error {
	_, port, err := net.SplitHostPort(o.Address)
	if err != nil {
		return fmt.Errorf("--address %q is not host:port (for example localhost:3100): %w", o.Address, err)
	}
	if port == "" {
		return fmt.Errorf("--address %q has no port (for example localhost:3100)", o.Address)
	}
	if o.AllNamespaces && o.Hub.Namespace != "" {
		return fmt.Errorf("--namespace and --all-namespaces cannot be combined")
	}
	return nil
}

// ValidateAndRun checks the flags, then serves the dashboard until ctx is done.
func (o *Options) ValidateAndRun(ctx context.Context) error {
	if err := o.Validate(); err != nil {
		return err
	}
	return o.Run(ctx)
}

// Run serves the dashboard until ctx is done.
func (o *Options) Run(ctx context.Context) error {
	c, namespace, err := o.Hub.Clients()
	if err != nil {
		return err
	}
	if o.AllNamespaces {
		namespace = ""
	}
	// Fail at once, with a message a person can act on, when the policies cannot be
	// listed, rather than serve pages that stay empty.
	if _, err := c.Traffic.TrafficV1alpha1().TrafficMigrationPolicies(namespace).List(ctx, metav1.ListOptions{Limit: 1}); err != nil {
		return hubclient.PolicyError(c.Traffic.Discovery(), err, "list", namespace, "")
	}

	w := policywatch.New(c, policywatch.Scope{Namespace: namespace}, o.ErrOut)
	ctx, cancel := context.WithCancel(ctx)
	defer w.Shutdown()
	defer cancel()
	if err := w.Start(ctx); err != nil || ctx.Err() != nil {
		return err
	}

	l, err := net.Listen("tcp", o.Address)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", o.Address, err)
	}
	s := &server{
		namespace:    namespace,
		policies:     w.PolicyLister(),
		source:       newChartSource(c.Kube.CoreV1()),
		changes:      w.Broadcaster,
		now:          time.Now,
		allowedHosts: allowedHosts(o.Address),
	}
	srv := &http.Server{
		Handler:           logRequests(ctx, s.handler()),
		ReadHeaderTimeout: 10 * time.Second,
		// Requests end with the command, so the event streams close on Ctrl-C.
		BaseContext: func(net.Listener) context.Context { return ctx },
	}
	go func() {
		<-ctx.Done()
		shutdownCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
		defer done()
		_ = srv.Shutdown(shutdownCtx)
	}()
	url := "http://" + browserAddress(o.Address, l.Addr())
	fmt.Fprintf(o.Out, "Serving the traffic-migration dashboard at %s (Ctrl-C to stop)\n", url)
	if s.allowedHosts == nil {
		fmt.Fprintf(o.ErrOut, "warning: --address %s is reachable from other machines: anyone who reaches it sees what your kubeconfig may read\n", o.Address)
	}
	o.listening(l.Addr().String())
	if err := srv.Serve(l); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve the dashboard: %w", err)
	}
	return nil
}

// allowedHosts are the Host header names the server answers on address: the
// loopback names, and the address's own host. nil (any) when address listens on
// every interface.
func allowedHosts(address string) map[string]bool {
	host, _, _ := net.SplitHostPort(address)
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		return nil
	}
	return map[string]bool{"localhost": true, "127.0.0.1": true, "::1": true, host: true}
}

// browserAddress is the host:port to print for a browser: the host of --address
// (localhost when it is empty or unspecified) with the port really listened on.
func browserAddress(address string, listened net.Addr) string {
	host, _, _ := net.SplitHostPort(address)
	if host == "" || net.ParseIP(host) != nil && net.ParseIP(host).IsUnspecified() {
		host = "localhost"
	}
	_, port, _ := net.SplitHostPort(listened.String())
	return net.JoinHostPort(host, port)
}
