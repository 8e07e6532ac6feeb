//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package node

import (
	"errors"
	"os"
	"syscall"
)

// tryLock takes an exclusive flock without blocking. flock locks belong to
// the open file, so a second open in the same process conflicts too.
func tryLock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINTR):
			continue
		case errors.Is(err, syscall.EWOULDBLOCK):
			return errLocked
		default:
			return err
		}
	}
}

func unlock(f *os.File) error { return syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
