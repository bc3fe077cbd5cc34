// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	"open-cluster-management.io/traffic-migration/pkg/hub/promcheck"
)

// querierIdleTTL is how long a Prometheus client is kept after its last use. The
// Secrets are read by GET, never watched, so a client whose Secret was deleted, or that
// no policy names any more, is only known to be unused by its age; one dropped too
// early is simply built again.
const querierIdleTTL = 10 * time.Minute

// querierCache keeps one Prometheus client per Secret version, so that checks reuse
// connections and a changed Secret takes effect at its next check. It lets go of a
// client when its Secret is found deleted or the client has not been used for
// querierIdleTTL.
type querierCache struct {
	clock clock.PassiveClock
	// limits bound where every client connects and what it reads.
	limits Limits

	mu      sync.Mutex
	entries map[string]querierEntry // by "<namespace>/<name>" of the Secret
}

type querierEntry struct {
	uid             types.UID
	resourceVersion string
	querier         promcheck.Querier
	used            time.Time
}

func newQuerierCache(clk clock.PassiveClock, limits Limits) *querierCache {
	return &querierCache{clock: clk, limits: limits, entries: map[string]querierEntry{}}
}

// get returns the client for the Secret as it is now, building it when the Secret is new
// or changed. The error says what is wrong with the Secret and holds none of its values.
func (q *querierCache) get(secret *corev1.Secret) (promcheck.Querier, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	now := q.clock.Now()
	for key, e := range q.entries {
		if now.Sub(e.used) > querierIdleTTL {
			delete(q.entries, key)
		}
	}
	key := keyOf(secret.Namespace, secret.Name)
	if e, ok := q.entries[key]; ok && e.uid == secret.UID && e.resourceVersion == secret.ResourceVersion {
		e.used = now
		q.entries[key] = e
		return e.querier, nil
	}
	delete(q.entries, key)
	cfg, err := promcheck.ConfigFromSecret(secret)
	if err != nil {
		return nil, err
	}
	cfg.Allowlist, cfg.MaxAnswerBytes, cfg.MaxSeries = q.limits.Allowlist, q.limits.MaxAnswerBytes, q.limits.MaxSeries
	querier, err := promcheck.NewQuerier(cfg)
	if err != nil {
		return nil, err
	}
	q.entries[key] = querierEntry{uid: secret.UID, resourceVersion: secret.ResourceVersion, querier: querier, used: now}
	return querier, nil
}

// forget drops the client of a Secret that is gone.
func (q *querierCache) forget(namespace, name string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.entries, keyOf(namespace, name))
}

// len is how many clients are kept.
func (q *querierCache) len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.entries)
}
