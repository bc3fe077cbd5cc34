// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The agent binary exists to keep the hub's code out of every spoke's agent process:
// its dependencies must not grow the hub's back.
func TestNoHubDependencies(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command on PATH")
	}
	out, err := exec.Command(goBin, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	forbidden := []string{
		"open-cluster-management.io/traffic-migration/pkg/hub",
		"open-cluster-management.io/traffic-migration/pkg/cmd/manager",
		"open-cluster-management.io/traffic-migration/pkg/cmd/status",
		"open-cluster-management.io/addon-framework/pkg/addonmanager",
		"open-cluster-management.io/addon-framework/pkg/addonfactory",
		"helm.sh/",
		"k8s.io/apiextensions-apiserver/pkg/apiserver",
		"k8s.io/apiserver/",
	}
	for _, pkg := range strings.Fields(string(out)) {
		if pkg == "open-cluster-management.io/traffic-migration/pkg/cmd" {
			t.Errorf("the agent binary links %s, the whole command tree", pkg)
		}
		for _, f := range forbidden {
			if strings.HasPrefix(pkg, f) {
				t.Errorf("the agent binary links %s", pkg)
			}
		}
	}
}
