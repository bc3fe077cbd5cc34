// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package testbed

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// TestReadEnvFile: the file make writes, one NAME=value a line; a value may hold '='
// and spaces, and comments and empty lines are skipped.
func TestReadEnvFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "testbed.env")
	content := "# written by make testbed-env\nTESTBED_ETCD=/cache/etcd-v3.6\n\nTESTBED_X=a=b c\n"
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"TESTBED_ETCD": "/cache/etcd-v3.6", "TESTBED_X": "a=b c"}
	if got := readEnvFile(path); !reflect.DeepEqual(got, want) {
		t.Errorf("readEnvFile = %v, want %v", got, want)
	}
	if got := readEnvFile(filepath.Join(t.TempDir(), "missing")); len(got) != 0 {
		t.Errorf("a missing file reads as %v, want nothing", got)
	}
}
