//go:build unix

package secureagg

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. On a shared machine the
// wall-clock latency depends on other load; CPU time per round does not,
// and bounds the latency on an idle machine from below (÷ cores).
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
