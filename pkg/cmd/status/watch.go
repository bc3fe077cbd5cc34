// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package status

import (
	"context"
	"errors"
	"io"
	"os"

	addonv1alpha1 "open-cluster-management.io/api/addon/v1alpha1"
	clusterv1beta1 "open-cluster-management.io/api/cluster/v1beta1"

	trafficv1alpha1 "open-cluster-management.io/traffic-migration/pkg/apis/traffic/v1alpha1"
	"open-cluster-management.io/traffic-migration/pkg/cmd/hubclient"
	"open-cluster-management.io/traffic-migration/pkg/cmd/policywatch"
)

// clearScreen moves a terminal's cursor home and clears the screen.
const clearScreen = "\x1b[H\x1b[2J"

// isTerminal reports whether w is a terminal (a character device).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}

// watch shows the view, then again whenever an object it is built from changes, until
// ctx is done. On a terminal each view replaces the last; elsewhere the views follow
// each other, apart from text and YAML by a "---" line.
func (o *Options) watch(ctx context.Context, c *hubclient.Clients, q query) error {
	// One read through the API first, so that a missing CRD, policy or right is an
	// error at once, and to learn the proxy Placement whose decisions are watched.
	objs, err := gather(ctx, apiReader{c}, q)
	if err != nil {
		return err
	}
	proxy := ""
	if q.name != "" {
		proxy = objs[0].Policy.ProxyPlacementName()
	}

	// For a detailed view, the proxy's decisions (all, without a named policy) and
	// the add-ons of all clusters.
	w := policywatch.New(c, policywatch.Scope{Namespace: q.namespace, Name: q.name, Decisions: q.detail, Placement: proxy, Addons: q.detail}, o.ErrOut)
	changed, unsubscribe := w.Subscribe()
	defer unsubscribe()
	ctx, cancel := context.WithCancel(ctx)
	defer w.Shutdown()
	defer cancel()
	if err := w.Start(ctx); err != nil || ctx.Err() != nil {
		return err
	}

	terminal := o.terminal()
	var last string
	shown := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		}
		text, problem, err := o.watchView(ctx, cacheReader{w}, q)
		if err != nil {
			return err
		}
		if shown && text == last {
			continue
		}
		last = text
		switch {
		case problem != "" && !o.Print.IsText():
			w.Write(o.ErrOut, problem)
		case terminal:
			w.Write(o.Out, clearScreen+text)
		case shown && o.Print.Output != "json":
			w.Write(o.Out, "---\n"+text)
		default:
			w.Write(o.Out, text)
		}
		shown = true
	}
}

// watchView renders the view from the caches. A named policy that is gone is not an
// error while watching: the view says so (problem) and the watch goes on.
func (o *Options) watchView(ctx context.Context, r reader, q query) (text, problem string, err error) {
	objs, err := gather(ctx, r, q)
	var notFound *hubclient.PolicyNotFoundError
	if errors.As(err, &notFound) {
		return notFound.Error() + "\n", notFound.Error() + "\n", nil
	}
	if err != nil {
		return "", "", err
	}
	out, err := o.render(objs, q)
	return string(out), "", err
}

// cacheReader reads through the watcher's informer caches.
type cacheReader struct{ w *policywatch.Watcher }

func (r cacheReader) policies(_ context.Context, namespace string) ([]*trafficv1alpha1.TrafficMigrationPolicy, error) {
	return r.w.Policies(namespace)
}

func (r cacheReader) policy(_ context.Context, namespace, name string) (*trafficv1alpha1.TrafficMigrationPolicy, error) {
	return r.w.Policy(namespace, name)
}

func (r cacheReader) decisions(_ context.Context, namespace, placement string) ([]*clusterv1beta1.PlacementDecision, error) {
	return r.w.Decisions(namespace, placement)
}

func (r cacheReader) addon(_ context.Context, cluster string) (*addonv1alpha1.ManagedClusterAddOn, error) {
	return r.w.Addon(cluster)
}
