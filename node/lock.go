package node

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// lockFile is the exclusive lock a running node holds in its data dir, with
// its pid inside, so that a second node on the same data dir stops at once
// instead of waiting forever on the Raft log's own file lock.
const lockFile = "node.lock"

// boltOpenTimeout bounds how long opening the Raft log waits for bbolt's
// file lock. The data dir lock is taken first, so this only fires if
// something other than a Cohort node holds raft.db.
const boltOpenTimeout = 2 * time.Second

// ErrDataDirInUse means another process holds the data dir's lock.
var ErrDataDirInUse = errors.New("data dir in use")

// dirLock is a held data dir lock.
type dirLock struct {
	f *os.File
}

// lockDataDir takes the data dir's exclusive lock without waiting and
// writes this process's pid into it. If another process holds it, the error
// wraps ErrDataDirInUse and names that process's pid.
func lockDataDir(dir string) (*dirLock, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("data dir %s: %w", dir, err)
	}
	path := filepath.Join(dir, lockFile)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	if err := tryLock(f); err != nil {
		b, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, errLocked) {
			pid := strings.TrimSpace(string(b))
			if _, perr := strconv.Atoi(pid); perr != nil {
				pid = "unknown"
			}
			return nil, fmt.Errorf("%w by pid %s: %s", ErrDataDirInUse, pid, dir)
		}
		return nil, fmt.Errorf("data dir lock %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, err = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
		if err != nil {
			unlock(f)
			f.Close()
			return nil, fmt.Errorf("data dir lock %s: write pid: %w", path, err)
		}
	}
	return &dirLock{f: f}, nil
}

// release empties the pid and drops the lock. The file stays: removing it
// would let a process that opened it just before lock a file nobody else
// sees.
func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	_ = l.f.Truncate(0)
	err := unlock(l.f)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	if err != nil {
		return fmt.Errorf("release data dir lock: %w", err)
	}
	return nil
}

var errLocked = errors.New("locked by another process")
