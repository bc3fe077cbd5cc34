// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"sync"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"open-cluster-management.io/traffic-migration/pkg/hub/gate"
)

// querierCache keeps one Prometheus client per Secret version, so that checks reuse
// connections and a changed Secret takes effect at its next check.
type querierCache struct {
	mu      sync.Mutex
	entries map[types.UID]querierEntry
}

type querierEntry struct {
	resourceVersion string
	querier         gate.Querier
}

func newQuerierCache() *querierCache {
	return &querierCache{entries: map[types.UID]querierEntry{}}
}

// get returns the client for the Secret as it is now, building it when the Secret is new
// or changed. The error says what is wrong with the Secret and holds none of its values.
func (q *querierCache) get(secret *corev1.Secret) (gate.Querier, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if e, ok := q.entries[secret.UID]; ok && e.resourceVersion == secret.ResourceVersion {
		return e.querier, nil
	}
	cfg, err := gate.ConfigFromSecret(secret)
	if err != nil {
		delete(q.entries, secret.UID)
		return nil, err
	}
	querier, err := gate.NewQuerier(cfg)
	if err != nil {
		delete(q.entries, secret.UID)
		return nil, err
	}
	q.entries[secret.UID] = querierEntry{resourceVersion: secret.ResourceVersion, querier: querier}
	return querier, nil
}
