//go:build !unix

package integrate_test

import (
	"testing"
	"time"
)

// cpuTime is unavailable here; the Adult figure then reports 0 CPU time.
func cpuTime(tb testing.TB) time.Duration { return 0 }
