// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"
)

// servedByHeader names the cluster that served a request, for the clients that count
// where their requests went.
const servedByHeader = "X-Served-By"

// serveBackend answers every request on :8080 with the cluster's name until ctx ends,
// then lets the requests in flight finish.
func serveBackend(ctx context.Context, cluster string) error {
	if cluster == "" {
		return errors.New("CLUSTER_NAME is not set")
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set(servedByHeader, cluster)
		fmt.Fprintf(w, "hello from %s\n", cluster)
	})
	l, err := net.Listen("tcp", ":8080")
	if err != nil {
		return fmt.Errorf("listen on :8080: %w", err)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	go func() { done <- server.Serve(l) }()
	fmt.Printf("incluster backend: serving %s on %s\n", cluster, l.Addr())
	select {
	case err := <-done:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := server.Shutdown(shutdown); err != nil {
		return fmt.Errorf("stop serving: %w", err)
	}
	return nil
}
