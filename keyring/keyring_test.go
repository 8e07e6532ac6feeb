package keyring

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
)

func init() { testkit.SmallKeys() }

var members = []string{"org01", "org02", "org03"}

// dealt caches one Paillier and one lattice deal for the test binary.
var dealt = sync.OnceValues(func() (map[string]*Paillier, error) {
	_, keys, err := Deal(rand.Reader, 512, members, 0)
	return keys, err
})

var latticeDeal = sync.OnceValues(func() (map[string]*lattice.Keys, error) { return DealLattice(members, 0) })

func paillierKeys(t *testing.T) map[string]*Paillier {
	t.Helper()
	k, err := dealt()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func latticeKeys(t *testing.T) map[string]*lattice.Keys {
	t.Helper()
	k, err := latticeDeal()
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func mode(t *testing.T, dir, name string) os.FileMode {
	t.Helper()
	st, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return st.Mode().Perm()
}

func TestPaillierSaveLoad(t *testing.T) {
	keys := paillierKeys(t)
	dir := t.TempDir()
	k := keys["org02"]
	if Held(dir) || len(ExistingPaillier(dir)) != 0 {
		t.Fatal("an empty dir holds keys")
	}
	if err := SavePaillier(dir, k); err != nil {
		t.Fatal(err)
	}
	if mode(t, dir, PaillierShareFile) != 0o600 || mode(t, dir, PaillierPublicFile) != 0o644 {
		t.Fatal("wrong file modes")
	}
	got, err := LoadPaillier(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got.Members, members) || got.Share.Index != 2 || got.Index("org02") != 2 || got.Index("nobody") != 0 ||
		got.Public().KeyID != k.Public().KeyID || got.Share.Secret.Cmp(k.Share.Secret) != 0 {
		t.Fatalf("loaded %+v", got)
	}
	if ents, _ := os.ReadDir(filepath.Join(dir, "keys")); len(ents) != 2 {
		t.Fatalf("temp files left behind: %v", ents)
	}
	if !Held(dir) || len(ExistingPaillier(dir)) != 2 || len(ExistingLattice(dir)) != 0 {
		t.Fatal("saved keys not found")
	}
	// A share of another key is refused, as is a torn public file.
	_, other, err := Deal(rand.Reader, 512, members, 0)
	if err != nil {
		t.Fatal(err)
	}
	share, _ := other["org02"].Share.MarshalBinary()
	pub, _ := k.MarshalPublic()
	if _, err := ParsePaillier(pub, share); !errors.Is(err, ErrKeys) {
		t.Fatalf("foreign share: %v", err)
	}
	if _, err := ParsePaillier(pub[:len(pub)-1], share); !errors.Is(err, ErrKeys) {
		t.Fatalf("truncated public file: %v", err)
	}
	empty := t.TempDir()
	_, err = LoadPaillier(empty)
	if !errors.Is(err, os.ErrNotExist) || strings.Contains(err.Error(), empty) {
		t.Fatalf("empty dir: %v (want not-exist, naming no path)", err)
	}
}

func TestDealValidates(t *testing.T) {
	if _, _, err := Deal(rand.Reader, 512, []string{"a", "a", "b"}, 0); !errors.Is(err, ErrKeys) {
		t.Fatalf("duplicate members: %v", err)
	}
	if _, _, err := Deal(rand.Reader, 512, nil, 0); !errors.Is(err, ErrKeys) {
		t.Fatalf("no members: %v", err)
	}
	if _, err := DealLattice([]string{"a", "a"}, 0); !errors.Is(err, ErrKeys) {
		t.Fatalf("duplicate lattice members: %v", err)
	}
}

func TestInstallAndRead(t *testing.T) {
	dir := t.TempDir()
	s := job.DirSecrets(dir)
	p := paillierKeys(t)["org01"]
	id := p.Public().KeyID
	if err := InstallPaillier(s, p, Info{Made: MadeDealerless, KeyID: "x", Parties: members, Threshold: 2}); err != nil {
		t.Fatal(err)
	}
	got, err := ReadPaillier(s)
	if err != nil || got.Public().KeyID != id || got.Share.Index != 1 {
		t.Fatalf("read %v %v", got, err)
	}
	l := latticeKeys(t)["org03"]
	if err := InstallLattice(s, l, LatticeInfo(l, MadeDealerless, "job-1")); err != nil {
		t.Fatal(err)
	}
	gotL, err := ReadLattice(s)
	if err != nil || gotL.ID() != l.ID() || gotL.Self != 3 || gotL.Name() != "org03" {
		t.Fatalf("read lattice %v %v", gotL, err)
	}
	for _, name := range []string{PaillierInfoFile, LatticeInfoFile} {
		info, err := LoadInfo(dir, name)
		if err != nil || info.Made != MadeDealerless || !slices.Equal(info.Parties, members) {
			t.Fatalf("%s: %+v %v", name, info, err)
		}
	}
	if info, _ := LoadInfo(dir, LatticeInfoFile); info.Params != lattice.ParamsBGV13 || info.Threshold != 2 || info.Job != "job-1" {
		t.Fatalf("lattice info %+v", info)
	}
	// The shares are the node's secrets.
	if mode(t, dir, LatticeShareFile) != 0o600 || mode(t, dir, PaillierShareFile) != 0o600 {
		t.Fatal("a share is readable by others")
	}
}

func TestLatticeSaveLoad(t *testing.T) {
	keys := latticeKeys(t)
	for i, m := range members {
		k := keys[m]
		if k.Self != i+1 || k.Quorum != lattice.DefaultQuorum(3) || k.ID() != keys[members[0]].ID() {
			t.Fatalf("%s: point %d quorum %d", m, k.Self, k.Quorum)
		}
	}
	dir := t.TempDir()
	if err := SaveLattice(dir, keys["org02"]); err != nil {
		t.Fatal(err)
	}
	if mode(t, dir, LatticeShareFile) != 0o600 || mode(t, dir, LatticePublicFile) != 0o644 {
		t.Fatal("wrong file modes")
	}
	got, err := LoadLattice(dir)
	if err != nil || got.ID() != keys["org02"].ID() || got.Self != 2 {
		t.Fatalf("loaded %v %v", got, err)
	}
	if !Held(dir) || len(ExistingLattice(dir)) != 2 || len(ExistingPaillier(dir)) != 0 {
		t.Fatal("saved keys not found")
	}
	// A share of another key is refused.
	other, err := DealLattice(members, 0)
	if err != nil {
		t.Fatal(err)
	}
	share, _ := other["org02"].MarshalShare()
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(LatticeShareFile)), share, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadLattice(dir); !errors.Is(err, ErrKeys) || !errors.Is(err, lattice.ErrMismatch) {
		t.Fatalf("foreign share: %v", err)
	}
	// Staged keys live apart from the installed ones.
	s := job.DirSecrets(dir)
	if err := StageLattice(s, "keys/keygen/job-1/1", keys["org01"]); err != nil {
		t.Fatal(err)
	}
	staged, err := ReadStagedLattice(s, "keys/keygen/job-1/1")
	if err != nil || staged.Self != 1 || staged.ID() != keys["org01"].ID() {
		t.Fatalf("staged %v %v", staged, err)
	}
	if _, err := ReadStagedLattice(s, "keys/keygen/job-1/2"); !errors.Is(err, ErrKeys) {
		t.Fatalf("nothing staged: %v", err)
	}
}

func TestParseInfo(t *testing.T) {
	for _, b := range []string{`{"made":"guessed"}`, `not json`, `{"made": 3}`} {
		if _, err := ParseInfo([]byte(b)); !errors.Is(err, ErrKeys) {
			t.Errorf("%s: %v", b, err)
		}
	}
	if err := SaveInfo(t.TempDir(), "keys/other", Info{Made: MadeDealer}); !errors.Is(err, ErrKeys) {
		t.Fatalf("saved an info file of another name: %v", err)
	}
}
