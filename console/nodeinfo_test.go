package console

import (
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/keyring"
)

// The node view's key status is loaded again only when the key files
// change: a new key shows after the cache's time-to-live, and files whose
// names, sizes and times did not change are not read again.
func TestFileCacheReloadsChangedKeys(t *testing.T) {
	dir := t.TempDir()
	install := func() string {
		t.Helper()
		_, keys, err := keyring.Deal(rand.Reader, 1024, []string{"a", "b", "c"}, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := keyring.SavePaillier(dir, keys["a"]); err != nil {
			t.Fatal(err)
		}
		id := keys["a"].Public().KeyID
		return hex.EncodeToString(id[:])
	}
	first := install()
	f := newFileCache(dir)
	f.refresh()
	if !f.keyInfo.Present || f.keyInfo.Err != "" || f.keyInfo.KeyID == "" {
		t.Fatalf("key status %+v", f.keyInfo)
	}
	if f.keyInfo.KeyID != first {
		t.Fatalf("key %s shown, %s installed", f.keyInfo.KeyID, first)
	}
	// Unchanged files are not read again: garble the share in place,
	// keeping its size and time, and the status stays.
	share := filepath.Join(dir, "keys", "threshold.share")
	fi, err := os.Stat(share)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(share)
	if err != nil {
		t.Fatal(err)
	}
	good := slices.Clone(b)
	for i := range b {
		b[i] = 'x'
	}
	if err := os.WriteFile(share, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(share, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	f.at = f.at.Add(-2 * fileCacheTTL)
	f.refresh()
	if f.keyInfo.KeyID != first || f.keyInfo.Err != "" {
		t.Fatalf("unchanged key files were read again: %+v", f.keyInfo)
	}
	if err := os.WriteFile(share, good, 0o600); err != nil {
		t.Fatal(err)
	}
	second := install()
	f.at = f.at.Add(-2 * fileCacheTTL)
	f.refresh()
	if f.keyInfo.KeyID != second || first == second {
		t.Fatalf("key %s shown, %s installed", f.keyInfo.KeyID, second)
	}
}
