// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import "context"

// StartWorkManager runs OCM's work manager on the hub with ManifestWorkReplicaSets
// enabled (an alpha feature, off by default): for each ManifestWorkReplicaSet it
// writes a ManifestWork to every cluster that the Placements it names select, and
// deletes the ManifestWork of a cluster they no longer select. It runs until the test
// bed stops, or until the returned process is stopped.
func (b *Bed) StartWorkManager(ctx context.Context) (*Process, error) {
	return b.startHubController(ctx, "work manager", ProgramOCMWork, "work-manager", "manager",
		"--feature-gates=ManifestWorkReplicaSet=true")
}
