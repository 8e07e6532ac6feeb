// Package cputime reads the CPU time the test process has used, for the
// benchmarks' core-second figures: on a shared machine the wall time of a
// run depends on other load, its CPU time much less.
package cputime

import (
	"testing"
	"time"
)

// Used is the user and system CPU time, every thread (the garbage
// collector's included), that the process has used so far; 0 where the
// system does not report it. It fails tb if the system refuses to say.
func Used(tb testing.TB) time.Duration {
	tb.Helper()
	d, err := used()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// Thread is the CPU time the calling OS thread has used so far (Linux; 0
// elsewhere): a benchmark that runs two parties in one process locks each
// to its thread (runtime.LockOSThread) and reads their shares apart. Work
// the runtime does on other threads for them (the garbage collector's
// background workers) is not counted; Used is.
func Thread(tb testing.TB) time.Duration {
	tb.Helper()
	d, err := thread()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
