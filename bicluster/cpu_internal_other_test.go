//go:build !unix

package bicluster

import "time"

// procCPU is unavailable here.
func procCPU() time.Duration { return 0 }
