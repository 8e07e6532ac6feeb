//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package node

import "os"

// Without flock the data dir is not locked; bbolt's own lock, bounded by
// boltOpenTimeout, still keeps a second node off the Raft log.
func tryLock(*os.File) error { return nil }

func unlock(*os.File) error { return nil }
