// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// checksumsFile is the name of the checksums a release lists its files in.
const checksumsFile = "SHA256SUMS"

// writeChecksums writes dir/SHA256SUMS: one line per regular file of dir (but itself
// and leftover .tmp files), sorted by name, in the format of sha256sum, so that
// `sha256sum -c SHA256SUMS` checks them in dir.
func writeChecksums(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var names []string
	for _, e := range entries {
		if !e.Type().IsRegular() || e.Name() == checksumsFile || strings.HasSuffix(e.Name(), ".tmp") {
			continue
		}
		names = append(names, e.Name())
	}
	if len(names) == 0 {
		return fmt.Errorf("checksums: no file in %s", dir)
	}
	slices.Sort(names)
	var b strings.Builder
	for _, name := range names {
		sum, err := sha256File(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		fmt.Fprintf(&b, "%s  %s\n", sum, name)
	}
	return writeFile(filepath.Join(dir, checksumsFile), []byte(b.String()), 0o644)
}
