package node

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
)

// TestLatticePoolConfig checks node.yaml's lattice_pool: left out it is
// the default, -1 turns the pool off, and a value outside 1..1024 is
// refused, naming the field.
func TestLatticePoolConfig(t *testing.T) {
	for _, c := range []struct {
		yaml string
		want int
		bad  bool
	}{{"", DefaultLatticePool, false}, {"lattice_pool: -1\n", 0, false}, {"lattice_pool: 8\n", 8, false},
		{"lattice_pool: -2\n", 0, true}, {fmt.Sprintf("lattice_pool: %d\n", maxLatticePool+1), 0, true}} {
		path := writeConfig(t, t.TempDir(), c.yaml)
		cfg, err := LoadConfig(path)
		if c.bad {
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), "lattice_pool") {
				t.Fatalf("%q: got %v, want a config error naming lattice_pool", c.yaml, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.yaml, err)
		}
		if got, err := cfg.latticePool(path); err != nil || got != c.want {
			t.Fatalf("%q: pool of %d, %v; want %d", c.yaml, got, err, c.want)
		}
	}
	if newLatticeZeros(0, nil, nil).current() != nil {
		t.Fatal("a pool when node.yaml turns it off")
	}
}

// TestLatticeZerosLifecycle checks the node's pool of lattice encryptions
// of zero over a real data dir: none before a key is installed, one for
// the key (the same for every member's share of it, refused for another
// key), paused with the Paillier pool while the node takes part in a job,
// replaced when another key is installed, and closed with the node.
func TestLatticeZerosLifecycle(t *testing.T) {
	dir := t.TempDir()
	secrets := job.DirSecrets(dir)
	r := newRandomizers(0, false, secrets, slog.New(slog.DiscardHandler))
	r.zeros = newLatticeZeros(2, secrets, slog.New(slog.DiscardHandler))
	r.start(t.Context())
	s := randomizerSecrets{secrets, r}
	if s.LatticeZeros() != nil {
		t.Fatal("a pool without a key")
	}
	members := []string{"a", "b", "c"}
	keys, err := keyring.DealLattice(members, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.SaveLattice(dir, keys["a"]); err != nil {
		t.Fatal(err)
	}
	p := keyring.LatticeZeros(s, keys["a"])
	if p == nil || keyring.LatticeZeros(s, keys["b"]) != p {
		t.Fatal("no pool, or another for another member's share of the installed key")
	}
	other, err := keyring.DealLattice(members, 2)
	if err != nil {
		t.Fatal(err)
	}
	if keyring.LatticeZeros(s, other["a"]) != nil {
		t.Fatal("the pool offered for a key not installed")
	}
	r.setBusy(true)
	if st, ok := latticeZeroStats(r.zeros); !ok || !st.Paused {
		t.Fatal("the pool fills while the node takes part in a job")
	}
	r.setBusy(false)
	if st, ok := latticeZeroStats(r.zeros); !ok || st.Paused || st.Size != 2 {
		t.Fatalf("idle: %+v, %v", st, ok)
	}
	if err := keyring.SaveLattice(dir, other["a"]); err != nil {
		t.Fatal(err)
	}
	if q := keyring.LatticeZeros(s, other["a"]); q == nil || q == p {
		t.Fatal("no new pool for a newly installed key")
	}
	r.close()
	if s.LatticeZeros() != nil {
		t.Fatal("a pool after close")
	}
}
