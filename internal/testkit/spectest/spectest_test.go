package spectest

import (
	"os"
	"path/filepath"
	"testing"
)

// Write leaves the spec at the path it was given and resolves tables
// against that directory, as a user's spec file is read.
func TestWrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spec.yaml")
	s := Write(t, path, "kind: x\nparties:\n  - name: a\n    tables: [{name: t, path: a.csv}]\n")
	if s.Kind != "x" || len(s.Parties) != 1 || s.Dir != filepath.Dir(path) {
		t.Fatalf("spec %+v", s)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatal(err)
	}
}
