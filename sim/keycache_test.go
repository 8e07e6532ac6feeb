package sim_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/sim"
)

// The key cache deals a member set's keys once, installs the same shares
// on later runs (each node's share 0600, readable as a dealt key), keeps
// another member set apart, and refuses a cache others may open.
func TestKeyCache(t *testing.T) {
	cache := filepath.Join(t.TempDir(), "cohort", "sim-keys")
	names := []string{"south", "north", "west"}
	install := func(names []string, root string) {
		t.Helper()
		setup, err := sim.CachedThresholdKeys(1024, cache)(names)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if err := setup(n, filepath.Join(root, n)); err != nil {
				t.Fatal(err)
			}
		}
		if err := setup("east", filepath.Join(root, "east")); err == nil {
			t.Fatal("a share was installed for a name that is not a member")
		}
	}
	first, second, other := t.TempDir(), t.TempDir(), t.TempDir()
	install(names, first)
	install([]string{"west", "north", "south"}, second) // the same set in another order
	install([]string{"north", "south"}, other)
	for _, n := range names {
		k, err := keyring.LoadPaillier(filepath.Join(second, n))
		if err != nil {
			t.Fatalf("%s's cached share: %v", n, err)
		}
		if k.Members[k.Index(n)-1] != n {
			t.Fatalf("%s got the share of %s", n, k.Members[k.Index(n)-1])
		}
		for _, f := range []string{keyring.PaillierShareFile, keyring.PaillierPublicFile, keyring.LatticeShareFile} {
			a, errA := os.ReadFile(filepath.Join(first, n, f))
			b, errB := os.ReadFile(filepath.Join(second, n, f))
			if errA != nil || errB != nil || !bytes.Equal(a, b) {
				t.Fatalf("%s's %s differs between two runs of the same members (%v, %v): dealt again", n, f, errA, errB)
			}
		}
		fi, err := os.Stat(filepath.Join(second, n, keyring.PaillierShareFile))
		if err != nil || fi.Mode().Perm() != 0o600 {
			t.Fatalf("%s's installed share: %v %v, want mode 0600", n, fi.Mode(), err)
		}
	}
	a, _ := os.ReadFile(filepath.Join(first, "north", keyring.PaillierPublicFile))
	b, _ := os.ReadFile(filepath.Join(other, "north", keyring.PaillierPublicFile))
	if bytes.Equal(a, b) {
		t.Fatal("two member sets share one key")
	}
	entries, err := os.ReadDir(cache)
	if err != nil || len(entries) != 2 {
		t.Fatalf("cache holds %v (%v), want one entry per member set", entries, err)
	}
	for _, e := range entries {
		if fi, err := os.Stat(filepath.Join(cache, e.Name())); err != nil || fi.Mode().Perm() != 0o700 {
			t.Fatalf("entry %s: %v %v, want mode 0700", e.Name(), fi.Mode(), err)
		}
	}
	if err := os.Chmod(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := sim.CachedThresholdKeys(1024, cache)(names); err == nil || !strings.Contains(err.Error(), sim.KeyCacheEnv+"=off") {
		t.Fatalf("a cache others may open: %v, want a refusal saying how to turn the cache off", err)
	}
}

// KeyCacheDir: off, a directory of one's own, or the user cache dir.
func TestKeyCacheDir(t *testing.T) {
	if d := sim.KeyCacheDir("off"); d != "" {
		t.Errorf("off: %q", d)
	}
	if d := sim.KeyCacheDir("/x/keys"); d != "/x/keys" {
		t.Errorf("a directory: %q", d)
	}
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	t.Setenv("HOME", "/x/home")
	base, err := os.UserCacheDir()
	if err != nil {
		t.Skip(err)
	}
	if d := sim.KeyCacheDir(""); d != filepath.Join(base, "cohort", "sim-keys") {
		t.Errorf("default: %q", d)
	}
}
