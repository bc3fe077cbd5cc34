// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package version holds the build's version, set by the linker (see the Makefile).
package version

import (
	"fmt"
	"runtime"
	"runtime/debug"
)

// Version is the release of this build, set with -ldflags "-X ...Version=v0.1.0".
var Version = "dev"

// Info describes a build.
type Info struct {
	Version   string `json:"version"`
	GoVersion string `json:"goVersion"`
	Platform  string `json:"platform"`
	Revision  string `json:"revision,omitempty"`
}

// Get returns the build's version information.
func Get() Info {
	info := Info{Version: Version, GoVersion: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" {
				info.Revision = s.Value
			}
		}
	}
	return info
}

// UserAgent is the User-Agent of a program of this build, "<program>/<version>
// (<platform>)", which names it in the API servers' audit logs and metrics.
func UserAgent(program string) string {
	info := Get()
	return fmt.Sprintf("%s/%s (%s)", program, info.Version, info.Platform)
}
