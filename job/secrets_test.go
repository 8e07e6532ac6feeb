package job_test

import (
	"os"
	"path/filepath"
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
