package cputime

import (
	"runtime"
	"testing"
	"time"
)

// Spinning for a while uses CPU time that Used sees.
func TestUsedGrows(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("not measured here")
	}
	before := Used(t)
	x := 0
	for start := time.Now(); time.Since(start) < 50*time.Millisecond; {
		x++
	}
	if after := Used(t); after-before < 10*time.Millisecond {
		t.Fatalf("50 ms of spinning (%d loops) used %v of CPU", x, after-before)
	}
}
