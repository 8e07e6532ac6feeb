package testkit

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/paillier"
)

const self = "github.com/cohortdm/cohort/internal/testkit"

// Test helpers must never reach production code: SmallKeys weakens the
// key-size policy, so no non-test file outside testkit may import it.
func TestOnlyTestsImport(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("module root not at %s: %v", root, err)
	}
	own := filepath.Join(root, "internal", "testkit")
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path == own || (path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		checked++
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			if p == self || strings.HasPrefix(p, self+"/") {
				t.Errorf("%s imports %s; only _test.go files may", path, p)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files under %s; the walk missed the module", checked, root)
	}
}

// The opt-in is process-wide and lasts, so the policy is checked before it
// once per process here, not in a test that -count repeats.
func TestMain(m *testing.M) {
	if paillier.CheckModulusSize(paillier.MinTestBits) == nil {
		fmt.Fprintln(os.Stderr, "small modulus accepted before SmallKeys")
		os.Exit(1)
	}
	os.Exit(m.Run())
}

// SmallKeys lets the key-size policy accept a small modulus in this binary.
func TestSmallKeys(t *testing.T) {
	SmallKeys()
	if err := paillier.CheckModulusSize(paillier.MinTestBits); err != nil {
		t.Fatal(err)
	}
}

// LoadAverage gives the three averages as numbers where /proc has them.
func TestLoadAverage(t *testing.T) {
	got := LoadAverage()
	if _, err := os.Stat("/proc/loadavg"); err != nil {
		if got != "unknown" {
			t.Fatalf("without /proc/loadavg: %q, want unknown", got)
		}
		return
	}
	f := strings.Fields(got)
	if len(f) != 3 {
		t.Fatalf("LoadAverage() = %q, want three fields", got)
	}
	for _, s := range f {
		if _, err := strconv.ParseFloat(s, 64); err != nil {
			t.Fatalf("LoadAverage() = %q: %v", got, err)
		}
	}
}
