package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// qid-test names the columns that re-identify: an id column and a
// combination unique per row are flagged, a column with two even values
// is not.
func TestDataQIDTest(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.csv")
	if err := os.WriteFile(path, []byte("id,age,sex\n1,30,M\n2,30,F\n3,41,M\n4,41,F\n5,55,M\n6,55,F\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := runApp(t, "data", "qid-test", path, "--alpha", "0.5")
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			lines[f[0]] = l
		}
	}
	if !strings.HasSuffix(lines["id"], "yes") || !strings.HasSuffix(lines["age,sex"], "yes") || strings.HasSuffix(lines["sex"], "yes") {
		t.Fatalf("output:\n%s", out)
	}
	if _, err := runApp(t, "data", "qid-test", path, "--columns", "zip"); err == nil {
		t.Fatal("an unknown column was tested")
	}
}
