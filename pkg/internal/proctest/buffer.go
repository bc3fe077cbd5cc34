// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package proctest

import (
	"bytes"
	"sync"
)

// Buffer is a buffer that a command or a logger writes to while a test reads it.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *Buffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *Buffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
