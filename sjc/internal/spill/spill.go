// Package spill writes records a party cannot keep in memory to one file
// and reads any one of them back later, by the offset and length Append
// returned. sjc spills a party's partitions (its rows and class counts at
// the open tree nodes of a level) here when they exceed its memory budget,
// as Xu's thesis stores a data partition on disk when memory is not free
// (New Models and Techniques on Privacy-Preserving Information Sharing,
// §3.4.1). A file is written once, front to back through a buffer, and
// synced when closed: records are streamed out and read back one at a
// time, never the whole file at once.
package spill

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
)

// Writer appends records to a new file.
type Writer struct {
	f    *os.File
	w    *bufio.Writer
	off  int64
	path string
}

// Create creates the file at path, which must not exist, readable by its
// owner alone.
func Create(path string) (*Writer, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	return &Writer{f: f, w: bufio.NewWriterSize(f, 1<<16), path: path}, nil
}

// Append writes one record and returns where it starts.
func (w *Writer) Append(b []byte) (off int64, err error) {
	off = w.off
	n, err := w.w.Write(b)
	w.off += int64(n)
	if err != nil {
		return 0, fmt.Errorf("spill: %w", err)
	}
	return off, nil
}

// Close flushes and syncs the file, so that a kept state that names its
// records never outlives them, and closes it.
func (w *Writer) Close() error {
	err := w.w.Flush()
	if err == nil {
		err = w.f.Sync()
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// Discard closes the file and removes it: what it holds is not kept.
func (w *Writer) Discard() error {
	w.f.Close()
	if err := os.Remove(w.path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("spill: %w", err)
	}
	return nil
}

// Read returns the record of n bytes at off in the file at path.
func Read(path string, off, n int64) ([]byte, error) {
	if off < 0 || n < 0 {
		return nil, fmt.Errorf("spill: a record at %d of %d bytes", off, n)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("spill: %w", err)
	}
	defer f.Close()
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("spill: %w", err)
	}
	return b, nil
}
