//go:build unix

package bicluster_test

import (
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time. cHawk runs on one
// goroutine, so on a shared machine its CPU time per run tracks the
// latency of an idle machine better than wall-clock time does.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
