// Package shareddata finds the real datasets the tests, benchmarks and
// figures use (UCI Adult, FATE's splits, FIMI): they live outside the
// repository, in shared/data beside its root (../shared/data), and a test
// that cannot find them skips and says so. No test names the data by a path
// of one machine.
package shareddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// ErrNotFound means no shared data directory was found.
var ErrNotFound = errors.New("shareddata: no shared/data beside the repository (set COHORT_DATA_DIR)")

// Dir returns the directory of one dataset (sub, as "adult" or "fimi"; ""
// for the data directory itself): $env when env names a variable that is
// set, else $COHORT_DATA_DIR/sub, else the first shared/data/sub beside the
// repository root or one of its parents (a checkout's ../shared/data, a
// worktree's ../../shared/data). from is a directory inside the
// repository (a test's working directory, ".").
func Dir(from, sub, env string) (string, error) {
	if env != "" {
		if d := os.Getenv(env); d != "" {
			return d, nil
		}
	}
	if d := os.Getenv("COHORT_DATA_DIR"); d != "" {
		return filepath.Join(d, sub), nil
	}
	dir, err := filepath.Abs(from)
	if err != nil {
		return "", err
	}
	for ; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		if dir == filepath.Dir(dir) {
			return "", fmt.Errorf("shareddata: no go.mod above %s", from)
		}
	}
	for range 3 {
		dir = filepath.Dir(dir)
		cand := filepath.Join(dir, "shared", "data", sub)
		if _, err := os.Stat(cand); err == nil {
			return cand, nil
		}
	}
	return "", ErrNotFound
}
