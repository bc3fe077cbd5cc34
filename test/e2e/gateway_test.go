// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package e2e

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	workv1alpha1 "open-cluster-management.io/api/work/v1alpha1"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"

	"open-cluster-management.io/traffic-migration/test/fixture"
	"open-cluster-management.io/traffic-migration/test/testbed"
)

// The backend that the story's HTTPRoute sends the Gateway's requests to, on each
// spoke, and the ManifestWorkReplicaSet that puts the Gateway and its route on the
// clusters of the proxy Placement.
const (
	backendName = "backend"
	routeName   = "gw-route"
	mwrsName    = "gateway"
	// servedByHeader is where the backend names the cluster it runs on.
	servedByHeader = "X-Served-By"
)

// gatewayReplicaSet is the consumer of the proxy Placement: a ManifestWorkReplicaSet
// of the story's Gateway (of Traefik's GatewayClass, one HTTP listener on Traefik's web
// entry point's port) and its HTTPRoute to the backend, which OCM's work manager puts on
// the clusters the proxy lists and deletes from those it drops.
func gatewayReplicaSet(t *testing.T) *workv1alpha1.ManifestWorkReplicaSet {
	t.Helper()
	mwrs, err := fixture.ManifestWorkReplicaSetOf(gatewaySystem, mwrsName, proxyName,
		fixture.TraefikGatewayObject(gatewaySystem, gatewayName, ""),
		fixture.BackendRouteObject(gatewaySystem, routeName, gatewayName, "", backendName))
	if err != nil {
		t.Fatal(err)
	}
	return mwrs
}

// direct is an HTTP client that reaches the nodes' addresses directly, through no
// proxy of the environment.
var direct = &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{Proxy: nil}}

// getThroughTraefik sends a request to a cluster's Traefik, at its web entry point on
// the cluster's node, and returns the response's status and the cluster that served
// it (the backend's header).
func getThroughTraefik(ctx context.Context, traefik *testbed.Traefik) (status int, servedBy string, err error) {
	url := "http://" + traefik.WebAddress() + "/"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := direct.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, "", fmt.Errorf("read the answer of %s: %w", url, err)
	}
	return resp.StatusCode, resp.Header.Get(servedByHeader), nil
}

// waitServedBy waits until a request to a cluster's Traefik is answered with want
// (an HTTP status) and served by the cluster named (none for "").
func waitServedBy(t *testing.T, traefik *testbed.Traefik, want int, cluster string) {
	t.Helper()
	eventually(t, fmt.Sprintf("Traefik on %s answering %d from %q", traefik.Cluster.Name, want, cluster), func(ctx context.Context) error {
		status, servedBy, err := getThroughTraefik(ctx, traefik)
		if err != nil {
			return err
		}
		if status != want || servedBy != cluster {
			return fmt.Errorf("answered %d served by %q", status, servedBy)
		}
		return nil
	})
}

// notAccepted is the agent's message for a Gateway that Traefik did not accept, with
// the address Traefik writes anyway.
func notAccepted(address string) string {
	return "Not accepted (" + string(gatewayv1.GatewayReasonListenersNotValid) + "). Addresses: " + address
}
