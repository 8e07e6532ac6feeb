package node_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/node"
)

// boost_lattice_cache_bytes reads -1 (none), 0 or unset (boost's
// default) and a number of bytes; below -1 is a config
// error naming the setting and not its value.
func TestConfigBoostLatticeCacheBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for body, want := range map[string]int64{"": 0, "boost_lattice_cache_bytes: -1\n": -1, "boost_lattice_cache_bytes: 0\n": 0,
		"boost_lattice_cache_bytes: 67108864\n": 64 << 20, "boost_lattice_cache_bytes: -7345\n": -2} {
		cfg, err := node.LoadConfig(node.WriteConfig(t, dir, body))
		if want == -2 {
			if !errors.Is(err, node.ErrConfig) || !strings.Contains(err.Error(), "boost_lattice_cache_bytes") || strings.Contains(err.Error(), "7345") {
				t.Errorf("%q: %v, want a config error naming boost_lattice_cache_bytes, not its value", body, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", body, err)
		}
		if cfg.BoostLatticeCacheBytes != want {
			t.Errorf("%q: %d, want %d", body, cfg.BoostLatticeCacheBytes, want)
		}
	}
}
