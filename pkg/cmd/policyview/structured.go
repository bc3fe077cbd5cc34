// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package policyview

import (
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// StructuredFormats are the values of -o that WriteStructured writes.
var StructuredFormats = []string{"json", "yaml"}

// WriteStructured writes v as json or yaml, the structured outputs (-o) of every
// read command.
func WriteStructured(w io.Writer, format string, v any) error {
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
