package main

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/buildinfo"
)

// `cohort version`, `cohort --version`: the link-time version, else the build info.
func TestVersion(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "cohort")
	if out, err := exec.Command("go", "build", "-ldflags", "-X main.version=v9.8.7-test", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, err := run(t, bin, args...)
		if err != nil || !strings.HasPrefix(out, "cohort v9.8.7-test (") || !strings.Contains(out, "go1.") {
			t.Errorf("cohort %s: %v %q %q", args[0], err, out, stderr)
		}
	}
	out, _, err := run(t, bin, "version", "--format", "json")
	var v buildinfo.Info
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.Version != "v9.8.7-test" || v.Go == "" || v.Platform == "" {
		t.Errorf("version --format json: %v %q", err, out)
	}
	if v := buildinfo.Read(""); v.Version == "" {
		t.Error("no version without ldflags")
	}
}
