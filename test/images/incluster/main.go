// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command incluster is the test image of the test bed's nodes: a pod that reaches its
// own API server as pods of the product do, through the kubernetes Service with
// in-cluster configuration (the ServiceAccount token, kube-root-ca.crt, and
// KUBERNETES_SERVICE_HOST/PORT). It reads the API server's version and asks who it is
// (a SelfSubjectReview, which only an authenticated token answers), logs both, and
// then answers its readiness probe on :8080/readyz. Until both succeed it logs why
// not, tries again every second, and stays unready.
//
// Run as "incluster backend", it is instead the backend of the spokes' Gateways: an
// HTTP server on :8080 that answers every request with the cluster it runs on
// ($CLUSTER_NAME, also in the X-Served-By header), ready as soon as it listens, and a
// gRPC server on :9090 (the health service, the cluster in the answers' header).
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"sync/atomic"
	"syscall"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if len(os.Args) > 1 && os.Args[1] == "backend" {
		if err := serveBackend(ctx, os.Getenv("CLUSTER_NAME")); err != nil {
			fmt.Fprintf(os.Stderr, "incluster backend: %v\n", err)
			os.Exit(1)
		}
		return
	}

	var ready atomic.Bool
	mux := http.NewServeMux()
	mux.HandleFunc("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !ready.Load() {
			http.Error(w, "not yet reached the API server", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	server := &http.Server{Addr: ":8080", Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := server.ListenAndServe(); err != nil && err != http.ErrServerClosed {
			fmt.Fprintf(os.Stderr, "incluster: serve readiness: %v\n", err)
			os.Exit(1)
		}
	}()

	for {
		if err := reachAPIServer(ctx); err != nil {
			fmt.Fprintf(os.Stderr, "incluster: %v\n", err)
		} else {
			ready.Store(true)
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(time.Second):
		}
	}
	<-ctx.Done()
	_ = server.Close()
}

// reachAPIServer reads the API server's version and the pod's own identity through
// the in-cluster configuration, and logs both.
func reachAPIServer(ctx context.Context) error {
	config, err := rest.InClusterConfig()
	if err != nil {
		return fmt.Errorf("read the in-cluster configuration: %w", err)
	}
	client, err := kubernetes.NewForConfig(config)
	if err != nil {
		return fmt.Errorf("make a client of %s: %w", config.Host, err)
	}
	version, err := client.Discovery().ServerVersion()
	if err != nil {
		return fmt.Errorf("GET %s/version: %w", config.Host, err)
	}
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		return fmt.Errorf("ask %s who this pod is: %w", config.Host, err)
	}
	fmt.Printf("incluster: reached the API server at %s (version %s) as %s\n", config.Host, version.GitVersion, review.Status.UserInfo.Username)
	return nil
}
