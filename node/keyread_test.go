package node

import (
	"crypto/rand"
	"os"
	"path/filepath"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
)

// ReadKeys leaves the installed key parsed in the cache the steps read it
// from (a later read parses nothing), reports a key it cannot read, and
// reads nothing where no key is installed.
func TestReadKeysFillsTheCache(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	n := &Node{secrets: job.DirSecrets(dir)}
	if err := n.ReadKeys(); err != nil {
		t.Fatalf("no key installed: %v", err)
	}
	_, keys, err := keyring.Deal(rand.Reader, 1024, []string{"a", "b", "c"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := keyring.SavePaillier(dir, keys["a"]); err != nil {
		t.Fatal(err)
	}
	if err := n.ReadKeys(); err != nil {
		t.Fatal(err)
	}
	if _, err := n.secrets.Parsed([]string{keyring.PaillierPublicFile, keyring.PaillierShareFile}, func([][]byte) (any, error) {
		t.Error("the key was parsed again after ReadKeys")
		return nil, nil
	}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, keyring.PaillierShareFile), []byte("not a share"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := n.ReadKeys(); err == nil {
		t.Error("a share that does not parse was read")
	}
}
