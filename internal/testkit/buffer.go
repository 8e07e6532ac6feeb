package testkit

import (
	"bytes"
	"sync"
)

// LockedBuffer is a bytes.Buffer that several goroutines may write to at
// once: a log sink for in-process nodes, a helper process's stderr, a
// run's progress lines.
type LockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *LockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *LockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
