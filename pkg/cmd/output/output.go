// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package output writes the structured output (-o json, -o yaml) of the version
// command, which both binaries have. The commands that read the hub (status, check)
// print through package printer, with kubectl's printers, instead. output depends on
// no other package of the project, so that the agent's binary links nothing of the
// hub through it.
package output

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Formats are the values of -o that Write writes.
var Formats = []string{"json", "yaml"}

// Write writes v as json or yaml, the structured outputs (-o) of the version command.
func Write(w io.Writer, format string, v any) error {
	var data []byte
	var err error
	switch format {
	case "json":
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	case "yaml":
		data, err = yaml.Marshal(v)
	default:
		return fmt.Errorf("unknown output format %q", format)
	}
	if err != nil {
		return fmt.Errorf("write the output as %s: %w", format, err)
	}
	_, err = w.Write(data)
	return err
}
