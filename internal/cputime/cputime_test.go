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
