package node

import (
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cohortdm/cohort/internal/testkit"
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
		{"paillier_tables: eager\n", DefaultRandomizerPool, false}, {"paillier_tables: soon\n", 0, true},
		{"randomizer_pool: -2\n", 0, true}, {fmt.Sprintf("randomizer_pool: %d\n", maxRandomizerPool+1), 0, true}} {
		path := writeConfig(t, t.TempDir(), c.yaml)
		cfg, err := LoadConfig(path)
		if c.bad {
			field, _, _ := strings.Cut(c.yaml, ":")
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), field) {
				t.Fatalf("%q: got %v, want a config error naming %s", c.yaml, err, field)
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
	r := newRandomizers(4, false, secrets, slog.New(slog.DiscardHandler))
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

// TestEagerTables checks node.yaml's paillier_tables: eager over a real
// data dir: once the node sees an installed key it builds the key's wide
// tables in the background, with or without a randomiser pool, close
// waits for the build, and the metrics say it is built (what an operator
// waits for before taking the node's memory as its level).
func TestEagerTables(t *testing.T) {
	_, keys, err := keyring.Deal(rand.Reader, 1024, []string{"a", "b", "c"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, size := range []int{0, 4} {
		dir := t.TempDir()
		if err := keyring.SavePaillier(dir, keys["a"]); err != nil {
			t.Fatal(err)
		}
		var logs testkit.LockedBuffer
		r := newRandomizers(size, true, job.DirSecrets(dir), slog.New(slog.NewTextHandler(&logs, nil)))
		if v := gaugeOf(t, r, "cohort_paillier_tables_built"); v != 0 {
			t.Fatalf("pool of %d, before start: tables built %v", size, v)
		}
		r.start(t.Context())
		if p := r.current(); (p != nil) != (size > 0) {
			t.Fatalf("pool of %d: got pool %v", size, p)
		}
		r.current() // the same key: no second build
		r.close()
		if got := strings.Count(logs.String(), "wide fixed-base tables are built"); got != 1 {
			t.Fatalf("pool of %d: %d table builds logged, want 1:\n%s", size, got, logs.String())
		}
		if v := gaugeOf(t, r, "cohort_paillier_tables_built"); v != 1 {
			t.Fatalf("pool of %d, after the build: tables built %v", size, v)
		}
		if v := gaugeOf(t, r, "cohort_paillier_tables_bytes"); v <= 0 {
			t.Fatalf("pool of %d: the built tables map %v bytes", size, v)
		}
	}
}

// gaugeOf gathers c's metrics and returns the gauge called name.
func gaugeOf(t *testing.T, c prometheus.Collector, name string) float64 {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return mf.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("no metric %s", name)
	return 0
}
