// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// SecondaryDNS is a second CoreDNS for the zones of a DNS the bed runs (the primary),
// serving them from an etcd prefix of its own, which changes only when the test calls
// Transfer: an authoritative server whose copy of the zone lags behind the primary's
// until the test lets it catch up, as a secondary between two zone transfers does.
type SecondaryDNS struct {
	*DNS
	primary *DNS
	etcdURL string
}

// StartSecondaryDNS starts a secondary of primary, on a free port of the bed's listen
// address, UDP and TCP, serving what primary serves now (a first Transfer). It runs
// until the bed stops or Stop.
func (b *Bed) StartSecondaryDNS(ctx context.Context, primary *DNS) (_ *SecondaryDNS, err error) {
	n := dnsSeq.Add(1)
	dir := filepath.Join(b.dir, fmt.Sprintf("dns-%d", n))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &SecondaryDNS{DNS: &DNS{Zones: primary.Zones, EtcdPrefix: fmt.Sprintf("/skydns-%d", n)}, primary: primary, etcdURL: b.EtcdURL}
	defer func() {
		if err != nil {
			s.Stop()
		}
	}()
	if err := s.Transfer(ctx); err != nil {
		return nil, err
	}
	if err := s.startCoreDNS(ctx, b, dir, false); err != nil {
		return nil, err
	}
	return s, nil
}

// Transfer makes the secondary serve what the primary serves now: one etcd
// transaction writes the primary's records under the secondary's prefix and deletes
// the secondary's others, so the secondary never serves a mix of the two.
func (s *SecondaryDNS) Transfer(ctx context.Context) error {
	records, err := s.etcdRange(ctx, s.primary.EtcdPrefix+"/")
	if err != nil {
		return fmt.Errorf("read the primary's records: %w", err)
	}
	return s.serve(ctx, records)
}

// Follow makes the secondary serve every state of the primary's zone lag after the
// primary did, as a secondary whose zone transfers come late: it reads the primary's
// records every followPoll and serves each state once it is lag old. It runs in the
// background until ctx ends or the returned stop is called; a failed read or write is
// retried at the next poll.
func (s *SecondaryDNS) Follow(ctx context.Context, lag time.Duration) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		type state struct {
			at      time.Time
			records map[string]string
		}
		var pending []state
		var last map[string]string
		ticker := time.NewTicker(followPoll)
		defer ticker.Stop()
		for {
			if records, err := s.etcdRange(ctx, s.primary.EtcdPrefix+"/"); err == nil && !maps.Equal(records, last) {
				pending, last = append(pending, state{time.Now(), records}), records
			}
			// The newest state that is lag old, and none older.
			var due *state
			for len(pending) > 0 && time.Since(pending[0].at) >= lag {
				due, pending = &pending[0], pending[1:]
			}
			if due != nil {
				if err := s.serve(ctx, due.records); err != nil {
					pending = append([]state{*due}, pending...)
				}
			}
			select {
			case <-ctx.Done():
				return
			case <-ticker.C:
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// followPoll is how often Follow reads the primary's records.
const followPoll = 250 * time.Millisecond

// serve makes the secondary serve records, in one etcd transaction.
func (s *SecondaryDNS) serve(ctx context.Context, records map[string]string) error {
	stale, err := s.etcdRange(ctx, s.EtcdPrefix+"/")
	if err != nil {
		return fmt.Errorf("read the secondary's records: %w", err)
	}
	var ops []map[string]any
	written := map[string]bool{}
	for key, value := range records {
		key = s.EtcdPrefix + strings.TrimPrefix(key, s.primary.EtcdPrefix)
		written[key] = true
		ops = append(ops, map[string]any{"request_put": map[string]any{"key": b64(key), "value": b64(value)}})
	}
	for key := range stale {
		if !written[key] {
			ops = append(ops, map[string]any{"request_delete_range": map[string]any{"key": b64(key)}})
		}
	}
	if len(ops) == 0 {
		return nil
	}
	var out struct {
		Succeeded bool `json:"succeeded"`
	}
	if err := s.etcdCall(ctx, "/v3/kv/txn", map[string]any{"success": ops}, &out); err != nil {
		return fmt.Errorf("write the secondary's records: %w", err)
	}
	if !out.Succeeded {
		return fmt.Errorf("write the secondary's records: the transaction did not succeed")
	}
	return nil
}

// etcdRange returns the keys under prefix with their values, through etcd's JSON API.
func (s *SecondaryDNS) etcdRange(ctx context.Context, prefix string) (map[string]string, error) {
	end := []byte(prefix)
	end[len(end)-1]++
	var out struct {
		Kvs []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"kvs"`
	}
	if err := s.etcdCall(ctx, "/v3/kv/range", map[string]any{"key": b64(prefix), "range_end": b64(string(end))}, &out); err != nil {
		return nil, err
	}
	kvs := make(map[string]string, len(out.Kvs))
	for _, kv := range out.Kvs {
		key, err := base64.StdEncoding.DecodeString(kv.Key)
		if err != nil {
			return nil, err
		}
		value, err := base64.StdEncoding.DecodeString(kv.Value)
		if err != nil {
			return nil, err
		}
		kvs[string(key)] = string(value)
	}
	return kvs, nil
}

// etcdCall posts a request to etcd's JSON API and decodes its answer into out.
func (s *SecondaryDNS) etcdCall(ctx context.Context, path string, in, out any) error {
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.etcdURL+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", path, resp.Status, bytes.TrimSpace(data))
	}
	return json.Unmarshal(data, out)
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
