// Copyright Contributors to the Open Cluster Management project
// SPDX-License-Identifier: Apache-2.0

package process

import (
	"context"
	"math"
	"os"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
)

// currentMemoryLimit returns the Go runtime's soft memory limit without changing it.
func currentMemoryLimit() int64 { return debug.SetMemoryLimit(-1) }

// keepMemoryLimit restores the runtime's soft limit, and the environment variables the
// library reads, after the test.
func keepMemoryLimit(t *testing.T) {
	t.Helper()
	previous := currentMemoryLimit()
	t.Cleanup(func() { debug.SetMemoryLimit(previous) })
	for _, env := range []string{"GOMEMLIMIT", "AUTOMEMLIMIT"} {
		if v, ok := os.LookupEnv(env); ok {
			t.Setenv(env, v) // restored after the test
			if err := os.Unsetenv(env); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func TestSetMemoryLimit(t *testing.T) {
	const limit = 256 << 20 // a container's memory limit, 256Mi
	tests := map[string]struct {
		ratio    float64
		env      map[string]string
		provider memlimit.Provider
		want     int64 // -1: the limit before
	}{
		"the default ratio of the container's limit": {
			ratio: DefaultMemoryLimitRatio, provider: memlimit.Limit(limit),
			want: 214748364, // 0.8 x 256 MiB, 204.8 MiB
		},
		"another ratio": {
			ratio: 0.5, provider: memlimit.Limit(limit),
			want: limit / 2,
		},
		"ratio 0 turns it off": {
			ratio: 0, provider: memlimit.Limit(limit),
			want: -1,
		},
		"GOMEMLIMIT in the environment wins": {
			ratio: DefaultMemoryLimitRatio, provider: memlimit.Limit(limit),
			env:  map[string]string{"GOMEMLIMIT": "100MiB"},
			want: -1,
		},
		"AUTOMEMLIMIT=off turns it off": {
			ratio: DefaultMemoryLimitRatio, provider: memlimit.Limit(limit),
			env:  map[string]string{"AUTOMEMLIMIT": "off"},
			want: -1,
		},
		"no limit to read": {
			ratio: DefaultMemoryLimitRatio,
			provider: func() (uint64, error) {
				return 0, memlimit.ErrNoLimit
			},
			want: math.MaxInt64, // the runtime's own default
		},
		"a limit that cannot be read keeps what was": {
			ratio: DefaultMemoryLimitRatio,
			provider: func() (uint64, error) {
				return 0, memlimit.ErrCgroupsNotSupported
			},
			want: -1,
		},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			keepMemoryLimit(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			// Something other than the outcomes, to see whether it changed.
			const before = 123 << 20
			debug.SetMemoryLimit(before)
			want := tc.want
			if want == -1 {
				want = before
			}

			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			setMemoryLimit(ctx, tc.ratio, tc.provider)
			if got := currentMemoryLimit(); got != want {
				t.Errorf("Go memory limit = %d, want %d", got, want)
			}
		})
	}
}

// TestSetMemoryLimitFollowsTheContainer: a pod resized in place gets a new memory limit
// without a restart, and the runtime's soft limit follows it.
func TestSetMemoryLimitFollowsTheContainer(t *testing.T) {
	keepMemoryLimit(t)
	refresh := memoryLimitRefresh
	memoryLimitRefresh = 10 * time.Millisecond
	t.Cleanup(func() { memoryLimitRefresh = refresh })

	var containerLimit atomic.Uint64
	containerLimit.Store(100 << 20)
	provider := func() (uint64, error) { return containerLimit.Load(), nil }

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	setMemoryLimit(ctx, 0.5, provider)
	if got, want := currentMemoryLimit(), int64(50<<20); got != want {
		t.Fatalf("Go memory limit = %d, want %d", got, want)
	}

	containerLimit.Store(200 << 20)
	waitMemoryLimit(t, 100<<20)
}

// waitMemoryLimit polls the runtime's soft limit until it is want.
func waitMemoryLimit(t *testing.T, want int64) {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		got := currentMemoryLimit()
		if got == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Go memory limit = %d, want %d within %s", got, want, testTimeout)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
