//go:build !unix

package sjc_test

import "time"

// cpuTime is not measured on this system: the core-second metrics read 0.
func cpuTime() time.Duration { return 0 }
