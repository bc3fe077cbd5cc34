// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policy

import (
	"sync"
	"time"
)

// memory is what the controller keeps of one policy between its syncs, beside the
// expectations of its writes (which are kept by object too): its rounds of checks,
// when its clusters are checked next and its last measure of their series' sample
// spacing (evaluator), the backoffs of its checks whose answers are over the
// manager's limits (cappedRun), its rounds of name
// server queries (nameServerChecks), and what it saw of its DNS (dns.Settle, the
// refused addresses' event), and the status its syncs decided but did not write yet
// (StatusWrites). None of it is needed for safety after a restart: a new process checks
// again, asks again and waits for the Gateways to settle again.
type memory struct {
	// rounds are the rounds of checks not taken yet, oldest first: the last may be in
	// flight, the others are done.
	rounds []*round
	// schedule is when the evaluator checks the policy's clusters next; nil when none
	// is checked.
	schedule *checkSchedule
	// spacing is the last measure of the trafficShare series' sample spacing.
	spacing *spacingMeasure
	// capped are the backoffs of its drain checks (false) and replacement checks
	// (true) after answers over the manager's limits; nil when none.
	capped map[bool]*cappedRun
	// nameServers are the rounds of name server queries; nil before the first.
	nameServers *nsRounds
	// programmedSince is, by cluster, when this manager first saw the target Gateway
	// Programmed with an address (dns.Settle).
	programmedSince map[string]time.Time
	// refusedNote is the refused addresses last reported in an event.
	refusedNote string
	// unwritten is the status the last sync decided and did not write yet (only check
	// results differ from the written one: StatusWrites); nil when none.
	unwritten *unwrittenStatus
	// statusWritten is when this process last wrote the policy's status, or first saw
	// it.
	statusWritten time.Time
}

// memories are the controller's memory of every policy, by key, behind one lock.
type memories struct {
	mu       sync.Mutex
	byPolicy map[string]*memory
}

func newMemories() *memories { return &memories{byPolicy: map[string]*memory{}} }

// with calls f with key's memory, made on first use, under the lock.
func (m *memories) with(key string, f func(*memory)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem := m.byPolicy[key]
	if mem == nil {
		mem = &memory{}
		m.byPolicy[key] = mem
	}
	f(mem)
}

// forget drops what is kept of a deleted policy, and stops its checks, but a round of
// checks in flight: the round ends unused (take drops the results of another policy's
// round), and a policy of the same name created meanwhile starts none beside it.
func (m *memories) forget(key string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	mem := m.byPolicy[key]
	if mem == nil {
		return
	}
	mem.schedule.stop()
	if n := len(mem.rounds); n > 0 && !mem.rounds[n-1].done {
		m.byPolicy[key] = &memory{rounds: mem.rounds[n-1:]}
		return
	}
	delete(m.byPolicy, key)
}
