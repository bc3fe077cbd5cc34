// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"context"
	"os"
	"path/filepath"
)

// Clusteradm runs the real clusteradm against the hub, as a user on the hub runs it
// (for example "accept --clusters c1" or "addon enable --names x --clusters c1,c2"),
// and returns what it printed on stdout. The error carries its stderr.
func (b *Bed) Clusteradm(ctx context.Context, args ...string) (string, error) {
	return b.runClusteradm(ctx, b.Hub.KubeconfigPath, args...)
}

// runClusteradm runs clusteradm with a kubeconfig. Its invocations and output are
// appended to clusteradm.log in the test bed's directory.
func (b *Bed) runClusteradm(ctx context.Context, kubeconfig string, args ...string) (string, error) {
	// A home of its own keeps its discovery cache out of the user's ~/.kube.
	home := filepath.Join(b.dir, "clusteradm-home")
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", err
	}
	return runCommand(ctx, ProgramClusteradm, b.dir, []string{"HOME=" + home}, append(args, "--kubeconfig="+kubeconfig)...)
}
