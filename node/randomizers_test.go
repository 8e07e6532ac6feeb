package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
)

// TestRandomizerPoolConfig checks node.yaml's randomizer_pool: left out it
// is the default, -1 turns the pool off, and a value outside 1..2^16 is
// refused, naming the field.
func TestRandomizerPoolConfig(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want int
		bad  bool
	}{{"", DefaultRandomizerPool, false}, {"randomizer_pool: -1\n", 0, false}, {"randomizer_pool: 64\n", 64, false},
		{"randomizer_pool: -2\n", 0, true}, {fmt.Sprintf("randomizer_pool: %d\n", maxRandomizerPool+1), 0, true}} {
		path := filepath.Join(t.TempDir(), "node.yaml")
		if err := os.WriteFile(path, []byte("name: a\ndata_dir: d\nconsortium: c.yaml\n"+c.yaml), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := LoadConfig(path)
		if c.bad {
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "randomizer_pool") {
				t.Fatalf("%q: got %v, want a config error naming randomizer_pool", c.yaml, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if got, err := cfg.randomizerPool(path); err != nil || got != c.want {
			t.Fatalf("%q: pool of %d, %v; want %d", c.yaml, got, err, c.want)
		}
	}
}

// TestRandomizersLifecycle checks the node's pool over a real data dir:
// none before a key is installed, one started for the key, paused while
// the node takes part in a job, and closed for good by close.
func TestRandomizersLifecycle(t *testing.T) {
	dir := t.TempDir()
	secrets := job.DirSecrets(dir)
	r := newRandomizers(4, secrets, slog.New(slog.DiscardHandler))
	r.start(t.Context())
	if p := r.current(); p != nil {
		t.Fatal("a pool without a key")
	}
	_, keys, err := keyring.Deal(rand.Reader, 1024, []string{"a", "b", "c"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.SavePaillier(dir, keys["a"]); err != nil {
		t.Fatal(err)
	}
	p := keyring.PaillierRandomizers(randomizerSecrets{secrets, r}, keys["a"])
	if p == nil {
		t.Fatal("no pool for the installed key")
	}
	if keyring.PaillierRandomizers(randomizerSecrets{secrets, r}, keys["b"]) != p {
		t.Fatal("another member's share of the same key gets another pool")
	}
	r.setBusy(true)
	if st, _ := r.stats(); !st.Paused {
		t.Fatal("the pool fills while the node takes part in a job")
	}
	r.setBusy(false)
	if st, ok := r.stats(); !ok || st.Paused || st.Size != 4 {
		t.Fatalf("idle: %+v, %v", st, ok)
	}
	r.close()
	if r.current() != nil {
		t.Fatal("a pool after close")
	}
	if _, ok := r.stats(); ok {
		t.Fatal("stats of a closed pool")
	}
}
