// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// EnvFileEnv names the file of the test bed's settings (TESTBED_*: its programs,
// images and inputs) that make writes (make testbed-env, hack/make/tests.mk), one
// NAME=value a line; unset, it is bin/testbed.env of this checkout. So a test of the
// bed runs with plain 'go test' once make has built the bed.
const EnvFileEnv = "TESTBED_ENV_FILE"

// Getenv returns the test bed's setting name: from the environment when it is set
// there (to run the bed with other builds), else from the file make writes
// (EnvFileEnv), else "".
func Getenv(name string) string {
	if v, ok := os.LookupEnv(name); ok {
		return v
	}
	return envFile()[name]
}

// envFile reads the settings file once; a missing or unreadable file is empty.
var envFile = sync.OnceValue(func() map[string]string {
	path := os.Getenv(EnvFileEnv)
	if path == "" {
		root, err := moduleDir("")
		if err != nil {
			return nil
		}
		path = filepath.Join(root, "bin", "testbed.env")
	}
	return readEnvFile(path)
})

// readEnvFile reads NAME=value lines, skipping empty lines and comments (#).
func readEnvFile(path string) map[string]string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]string{}
	scanner := bufio.NewScanner(f)
	for scanner.Scan() {
		line := strings.TrimSpace(scanner.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if name, value, ok := strings.Cut(line, "="); ok {
			out[name] = value
		}
	}
	return out
}
