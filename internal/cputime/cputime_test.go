package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Spinning uses CPU time that Used sees. The test spins until Used has
// grown by 10 ms, not for a fixed wall-clock time, which a loaded machine
// may give to other processes (50 ms of spinning got 9 ms of CPU at load
// 45); the minute is a guard against a Used that never moves.
func TestUsedGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not measured here")
	}
	before := Used(t)
	x := 0
	for start := time.Now(); Used(t)-before < 10*time.Millisecond; {
		for range 100_000 {
			x++
		}
		if time.Since(start) > time.Minute {
			t.Fatalf("a minute of spinning (%d loops) used %v of CPU", x, Used(t)-before)
		}
	}
}

// A thread's own spinning shows in Thread; another thread's does not.
func TestThreadGrows(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("not measured here")
	}
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	before := Thread(t)
	done := make(chan time.Duration)
	go func() { // another thread spins for 20 ms of its own CPU
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		t0 := Thread(t)
		for x := 0; Thread(t)-t0 < 20*time.Millisecond; x++ {
		}
		done <- Thread(t) - t0
	}()
	other := <-done
	if mine := Thread(t) - before; mine >= other {
		t.Errorf("this thread waited and used %v, the spinning one %v", mine, other)
	}
	x := 0
	for start := time.Now(); Thread(t)-before < 10*time.Millisecond; x++ {
		if x%100_000 == 0 && time.Since(start) > time.Minute {
			t.Fatalf("a minute of spinning used %v of this thread's CPU", Thread(t)-before)
		}
	}
}
