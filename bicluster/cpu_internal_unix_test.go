//go:build unix

package bicluster

import (
	"syscall"
	"time"
)

// procCPU is the process's user+system CPU time (0 if unavailable).
func procCPU() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
