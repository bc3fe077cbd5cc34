// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"fmt"
	"net"
	"strconv"
)

// CheckOCMHubPorts reports whether the fixed ports that StartOCMHub needs (those OCM's
// addon webhook-server always binds) are free now, so that a program can stop before
// it starts anything rather than when it starts the OCM hub. Only one OCM hub of a
// test bed runs on a host at a time.
func CheckOCMHubPorts() error {
	for _, port := range addonWebhookFixedPorts {
		l, err := net.Listen("tcp", ":"+strconv.Itoa(port))
		if err != nil {
			return fmt.Errorf("port %d, which OCM's addon webhook-server always binds, is taken (is another test bed with an OCM hub running?): %w", port, err)
		}
		l.Close()
	}
	return nil
}
