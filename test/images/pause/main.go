// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Command pause is the test bed's pod sandbox image: the container that holds a pod's
// namespaces does nothing until the runtime stops it. The test bed builds it here
// (make image), because no registry is reachable to pull registry.k8s.io/pause.
//
// Like the upstream pause, it exits 0 on SIGTERM or SIGINT. It does not reap zombies:
// the test bed's pods do not share their process namespace.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

func main() {
	signals := make(chan os.Signal, 1)
	signal.Notify(signals, syscall.SIGTERM, syscall.SIGINT)
	s := <-signals
	fmt.Fprintf(os.Stderr, "pause: %s, exiting\n", s)
}
