// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
)

// gatewayAPIModule ships the Gateway API's CRDs; the project depends on it, so its
// files are in the module cache.
const gatewayAPIModule = "sigs.k8s.io/gateway-api"

// StartSpoke starts one more spoke cluster, with OCM's spoke CRDs, for a test that
// needs a cluster of its own on a shared test bed. The name must be unique in the test
// bed: it names the spoke's directory and etcd prefix. The spoke is stopped with the
// test bed. It is safe to call from parallel tests.
func (b *Bed) StartSpoke(ctx context.Context, name string) (*Cluster, error) {
	b.mu.Lock()
	_, taken := b.Spokes[name]
	stopped := b.stopped
	b.mu.Unlock()
	switch {
	case taken:
		return nil, fmt.Errorf("spoke %q exists already", name)
	case stopped:
		return nil, errors.New("the test bed is stopped")
	}
	crds, err := ocmCRDFiles(spokeOCMCRDs)
	if err != nil {
		return nil, err
	}
	spoke, err := startCluster(ctx, name, b.dir, b.EtcdURL, b.network)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	if _, taken := b.Spokes[name]; taken || b.stopped {
		b.mu.Unlock()
		spoke.Process.Stop()
		return nil, fmt.Errorf("spoke %q: started twice, or the test bed stopped meanwhile", name)
	}
	b.Spokes[name] = spoke
	b.mu.Unlock()
	if err := InstallCRDs(ctx, spoke.Config, crds...); err != nil {
		return nil, fmt.Errorf("spoke %s: %w", name, err)
	}
	return spoke, nil
}

// GatewayAPICRDFiles lists the Gateway API's standard CRDs of GatewayClasses and
// Gateways, from the version of sigs.k8s.io/gateway-api the project builds with.
func GatewayAPICRDFiles() ([]string, error) {
	dir, err := moduleDir(gatewayAPIModule)
	if err != nil {
		return nil, err
	}
	crdDir := filepath.Join(dir, "config", "crd", "standard")
	return []string{
		filepath.Join(crdDir, "gateway.networking.k8s.io_gatewayclasses.yaml"),
		filepath.Join(crdDir, "gateway.networking.k8s.io_gateways.yaml"),
	}, nil
}

// GatewayAPIRouteCRDFiles lists the Gateway API's other standard CRDs that a Gateway
// API implementation such as Traefik watches beside GatewayClasses and Gateways:
// HTTPRoutes, GRPCRoutes, ReferenceGrants and BackendTLSPolicies.
func GatewayAPIRouteCRDFiles() ([]string, error) {
	dir, err := moduleDir(gatewayAPIModule)
	if err != nil {
		return nil, err
	}
	crdDir := filepath.Join(dir, "config", "crd", "standard")
	var files []string
	for _, kind := range []string{"httproutes", "grpcroutes", "referencegrants", "backendtlspolicies"} {
		files = append(files, filepath.Join(crdDir, "gateway.networking.k8s.io_"+kind+".yaml"))
	}
	return files, nil
}
