// Package atomicfile writes files so that a crash or a full disk never
// leaves a half-written one behind: readers see the old content or the new,
// never a mix.
package atomicfile

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Write writes b to path with mode perm through a temporary file in the
// same directory, synced before it is renamed over path. The directory must
// exist. On error path is untouched and the temporary file removed.
func Write(path string, b []byte, perm os.FileMode) error {
	return WriteFrom(path, perm, func(w io.Writer) error {
		_, err := w.Write(b)
		return err
	})
}

// WriteFrom is Write of what write writes (buffered), for a file larger
// than its writer wants in memory. An error from write leaves path
// untouched.
func WriteFrom(path string, perm os.FileMode, write func(w io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	// Chmod before writing: a secret is never readable by others, not even
	// for a moment.
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	bw := bufio.NewWriterSize(f, 1<<16)
	if err := write(bw); err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
