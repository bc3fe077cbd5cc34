// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package execute

import (
	"errors"
	"fmt"
	"testing"
)

// codedError is an error with an exit code of its own.
type codedError struct{ code int }

func (e *codedError) Error() string { return fmt.Sprintf("code %d", e.code) }
func (e *codedError) ExitCode() int { return e.code }

func TestExitCode(t *testing.T) {
	for name, tc := range map[string]struct {
		err  error
		want int
	}{
		"an error without a code":     {err: errors.New("failed"), want: 1},
		"an error with a code":        {err: &codedError{code: 2}, want: 2},
		"a wrapped error with a code": {err: fmt.Errorf("wait: %w", &codedError{code: 3}), want: 3},
	} {
		t.Run(name, func(t *testing.T) {
			if got := exitCode(tc.err); got != tc.want {
				t.Errorf("exitCode(%v) = %d, want %d", tc.err, got, tc.want)
			}
		})
	}
}
