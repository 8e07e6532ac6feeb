//go:build !unix

package bicluster_test

import (
	"testing"
	"time"
)

// cpuTime is unavailable here; benchmarks then report 0 CPU time.
func cpuTime(b *testing.B) time.Duration { return 0 }
