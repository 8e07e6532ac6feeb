package spill

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

func TestAppendReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	recs := [][]byte{[]byte("first"), {}, bytes.Repeat([]byte{7}, 200000), []byte("last")}
	offs := make([]int64, len(recs))
	for i, r := range recs {
		if offs[i], err = w.Append(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	for i := len(recs) - 1; i >= 0; i-- {
		got, err := Read(path, offs[i], int64(len(recs[i])))
		if err != nil || !bytes.Equal(got, recs[i]) {
			t.Fatalf("record %d: %d bytes, %v", i, len(got), err)
		}
	}
	info, err := os.Stat(path)
	if err != nil || info.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", info.Mode(), err)
	}
	if _, err := Read(path, offs[3], 100); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("a record past the end: %v", err)
	}
	if _, err := Create(path); err == nil {
		t.Fatal("Create overwrote an existing file")
	}
}

func TestDiscardRemoves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	w, err := Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Append([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the discarded file remains: %v", err)
	}
}
