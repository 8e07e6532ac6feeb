// Package examples bundles the small job specs and data that `cohort demo`
// and the README use, so the binary runs them from any directory.
package examples

import (
	"embed"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FS holds every example: one directory per job with spec.yaml and data/.
//
//go:embed */spec.yaml */data
var FS embed.FS

// Names lists the bundled examples in the order the demo runs them.
func Names() ([]string, error) {
	entries, err := fs.ReadDir(FS, ".")
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range entries {
		if e.IsDir() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// Extract writes the examples under dir and returns it.
func Extract(dir string) error {
	return fs.WalkDir(FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		target := filepath.Join(dir, path)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := FS.ReadFile(path)
		if err != nil {
			return err
		}
		if err := os.WriteFile(target, b, 0o644); err != nil {
			return fmt.Errorf("extract example %s: %w", path, err)
		}
		return nil
	})
}
