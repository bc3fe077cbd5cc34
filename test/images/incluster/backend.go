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

	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/metadata"
)

// servedByHeader names the cluster that served a request, for the clients that count
// where their requests went; gRPC answers carry it in their header metadata,
// lower-cased.
const servedByHeader = "X-Served-By"

// serveBackend answers every HTTP request on :8080 with the cluster's name, and every
// gRPC call of the health service (grpc.health.v1.Health) on :9090, without TLS, with
// SERVING and the cluster's name in its header, until ctx ends; then it lets the
// requests in flight finish. The gRPC server sets no MAX_CONNECTION_AGE: its
// connections last as long as the client and the gateway keep them.
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
	gl, err := net.Listen("tcp", ":9090")
	if err != nil {
		l.Close()
		return fmt.Errorf("listen on :9090: %w", err)
	}
	server := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	grpcServer := grpc.NewServer(grpc.UnaryInterceptor(func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
		if err := grpc.SetHeader(ctx, metadata.Pairs(servedByHeader, cluster)); err != nil {
			return nil, err
		}
		return handler(ctx, req)
	}))
	healthpb.RegisterHealthServer(grpcServer, health.NewServer())
	done := make(chan error, 2)
	go func() { done <- server.Serve(l) }()
	go func() { done <- grpcServer.Serve(gl) }()
	fmt.Printf("incluster backend: serving %s on %s (HTTP) and %s (gRPC)\n", cluster, l.Addr(), gl.Addr())
	select {
	case err := <-done:
		server.Close()
		grpcServer.Stop()
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	// Both servers let their calls in flight finish, within the same 10 s.
	shutdown, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	grpcStopped := make(chan struct{})
	go func() {
		grpcServer.GracefulStop()
		close(grpcStopped)
	}()
	err = server.Shutdown(shutdown)
	select {
	case <-grpcStopped:
	case <-shutdown.Done():
		grpcServer.Stop()
	}
	if err != nil {
		return fmt.Errorf("stop serving: %w", err)
	}
	return nil
}
