// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package logflags gives a command klog's flags (-v, --vmodule, ...).
package logflags

import (
	goflag "flag"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"
)

// Add adds klog's flags to cmd.
func Add(cmd *cobra.Command) {
	fs := goflag.NewFlagSet("klog", goflag.ContinueOnError)
	klog.InitFlags(fs)
	cmd.Flags().AddGoFlagSet(fs)
}
