package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/buildinfo"
)

// `cohort version`, `cohort --version`: the link-time version, else the build info.
func TestVersion(t *testing.T) {
	t.Parallel()
	bin := buildBinary(t) // linked with -X main.version=testVersion
	for _, args := range [][]string{{"version"}, {"--version"}} {
		out, stderr, err := run(t, bin, args...)
		if err != nil || !strings.HasPrefix(out, "cohort "+testVersion+" (") || !strings.Contains(out, "go1.") {
			t.Errorf("cohort %s: %v %q %q", args[0], err, out, stderr)
		}
	}
	out, _, err := run(t, bin, "version", "--format", "json")
	var v buildinfo.Info
	if err != nil || json.Unmarshal([]byte(out), &v) != nil || v.Version != testVersion || v.Go == "" || v.Platform == "" {
		t.Errorf("version --format json: %v %q", err, out)
	}
	if v := buildinfo.Read(""); v.Version == "" {
		t.Error("no version without ldflags")
	}
}
