//go:build linux

package cputime

import (
	"fmt"
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD (getrusage(2)), which package
// syscall does not name.
const rusageThread = 1

func thread() (time.Duration, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, fmt.Errorf("getrusage: %w", err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), nil
}
