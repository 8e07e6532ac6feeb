package job_test

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
)

func TestDirSecretsWriteRead(t *testing.T) {
	dir := t.TempDir()
	s := job.DirSecrets(dir)
	if err := s.WriteSecret("models/j1/part", []byte("one")); err != nil {
		t.Fatal(err)
	}
	if err := s.WriteSecret("models/j1/part", []byte("two")); err != nil {
		t.Fatal(err)
	}
	b, err := s.ReadSecret("models/j1/part")
	if err != nil || string(b) != "two" {
		t.Fatalf("read back %q, %v; want the second write", b, err)
	}
	fi, err := os.Stat(filepath.Join(dir, "models", "j1", "part"))
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
	for _, bad := range []string{"../escape", "/etc/passwd", ""} {
		if err := s.WriteSecret(bad, []byte("x")); err == nil {
			t.Errorf("WriteSecret(%q) succeeded; names must stay inside the data dir", bad)
		}
	}
}

// TestSecretErrorsNameNoDir: a secret that cannot be read or written is
// named relative to the data dir, never by the node's own path (a kind may
// pass the error to its coordinator), and still reads as not existing.
func TestSecretErrorsNameNoDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := job.DirSecrets(dir)
	_, err := s.ReadSecret("jobs/j1/model.json")
	if err == nil || !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), dir) {
		t.Fatalf("missing secret: %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "jobs"), nil, 0o600); err != nil { // a file where a directory must go
		t.Fatal(err)
	}
	if err := s.WriteSecret("jobs/j1/model.json", []byte("x")); err == nil || strings.Contains(err.Error(), dir) {
		t.Fatalf("unwritable secret: %v", err)
	}
	if err := job.WriteSecretFrom(s, "jobs/j1/out.csv", func(w io.Writer) error { _, err := w.Write([]byte("x")); return err }); err == nil || strings.Contains(err.Error(), dir) {
		t.Fatalf("unwritable streamed secret: %v", err)
	}
	boom := errors.New("boom")
	if err := job.WriteSecretFrom(s, "out/j1/out.csv", func(io.Writer) error { return boom }); !errors.Is(err, boom) || strings.Contains(err.Error(), dir) {
		t.Fatalf("a streamed secret whose writer failed: %v", err)
	}
}
