// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package integration

import (
	"strings"
	"testing"

	"open-cluster-management.io/traffic-migration/test/testbed"
)

// TestManagerControllers: `traffic-migration manager --controllers` starts one half
// of the manager (issue 42): addon-manager the add-on framework alone, policy the
// policy controllers without it. Each becomes ready against the hub (its /readyz,
// which StartManager waits for), says what it started, and does not start the other
// half.
func TestManagerControllers(t *testing.T) {
	for name, tc := range map[string]struct {
		want  string
		never []string
	}{
		"addon-manager": {want: `"Add-on manager started"`,
			never: []string{`"Hub controllers started"`, `logger="traffic-migration-policy-controller"`, `logger="traffic-migration-fleet-status-controller"`}},
		"policy": {want: `"Hub controllers started"`,
			never: []string{`"Add-on manager started"`, `logger="addon-deploy-controller"`, `logger="addon-registration-controller"`}},
	} {
		t.Run(name, func(t *testing.T) {
			m, err := bed.StartManager(t.Context(), testbed.ManagerOptions{Args: []string{"-v=2", "--controllers=" + name}})
			if err != nil {
				t.Fatalf("start the manager with --controllers=%s: %v", name, err)
			}
			defer m.Process.Stop()
			log, err := m.Process.Log()
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(log, tc.want) || !strings.Contains(log, `controllers="`+name+`"`) {
				t.Errorf("--controllers=%s: the log lacks %s with controllers=%q:\n%s", name, tc.want, name, m.Process.Tail(40))
			}
			for _, never := range tc.never {
				if strings.Contains(log, never) {
					t.Errorf("--controllers=%s: the log has %s:\n%s", name, never, m.Process.Tail(40))
				}
			}
		})
	}
}
