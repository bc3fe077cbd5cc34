// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

// Package output writes the structured output (-o json, -o yaml) of every read
// command. It depends on no other package of the project, so that the agent's own
// binary, which has the version command, links nothing of the hub.
package output

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// Formats are the values of -o that Write writes.
var Formats = []string{"json", "yaml"}

// Write writes v as json or yaml, the structured outputs (-o) of every read command.
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
