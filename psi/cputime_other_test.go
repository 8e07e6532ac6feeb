//go:build !unix

package psi

import (
	"testing"
	"time"
)

// cpuTime is unavailable here; benchmarks then report 0 CPU time.
func cpuTime(tb testing.TB) time.Duration { return 0 }
