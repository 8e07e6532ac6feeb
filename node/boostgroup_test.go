package node_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/node"
)

// boost_group_rows reads true, false (as YAML booleans or strings) and
// auto, unset is auto, and anything else is a config error naming it.
func TestConfigBoostGroupRows(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for body, want := range map[string]string{"": "", "boost_group_rows: true\n": "true", "boost_group_rows: false\n": "false",
		"boost_group_rows: auto\n": "auto", "boost_group_rows: \"true\"\n": "true", "boost_group_rows: sometimes\n": "error"} {
		cfg, err := node.LoadConfig(node.WriteConfig(t, dir, body))
		if want == "error" {
			if !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), "boost_group_rows") {
				t.Errorf("%q: %v, want a config error naming boost_group_rows", body, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if cfg.BoostGroupRows != want {
			t.Errorf("%q: %q, want %q", body, cfg.BoostGroupRows, want)
		}
	}
}
