// Package keytest deals the consortium keys that tests hand their parties
// in memory (jobtest runs, data dirs written by the test), once per test
// binary for each member set: dealing a threshold Paillier key (its
// safe-prime search) or a lattice key otherwise dominates the time of many
// short tests. The keys live in memory only, for the life of the test
// binary; nothing is written to the repository or shared between binaries.
// A test whose point is that two consortia hold different keys, or that
// inspects the dealing itself, deals its own.
//
// It is apart from testkit because it imports keyring, whose own tests
// use testkit. Only _test.go files may import it (testkit.TestOnlyTestsImport
// checks).
package keytest

import (
	"crypto/rand"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
)

type paillierKeys struct {
	once sync.Once
	pk   *paillier.ThresholdPublicKey
	keys map[string]*keyring.Paillier
	err  error
}

type latticeKeys struct {
	once sync.Once
	keys map[string]*lattice.Keys
	err  error
}

var cache struct {
	sync.Mutex
	paillier map[string]*paillierKeys
	lattice  map[string]*latticeKeys
}

func id(bits int, names []string) string {
	sorted := slices.Clone(names)
	slices.Sort(sorted)
	return fmt.Sprintf("%d %q", bits, sorted)
}

// Paillier is keyring.Deal(rand.Reader, bits, names, 0), dealt once per
// test binary for each modulus size and member set (in any order). The
// keys are shared: callers read them (save them to data dirs, hand them to
// parties) and never change them.
func Paillier(tb testing.TB, bits int, names []string) (*paillier.ThresholdPublicKey, map[string]*keyring.Paillier) {
	tb.Helper()
	k := id(bits, names)
	cache.Lock()
	if cache.paillier == nil {
		cache.paillier = map[string]*paillierKeys{}
	}
	d, ok := cache.paillier[k]
	if !ok {
		d = &paillierKeys{}
		cache.paillier[k] = d
	}
	cache.Unlock()
	d.once.Do(func() { d.pk, d.keys, d.err = keyring.Deal(rand.Reader, bits, names, 0) })
	if d.err != nil {
		tb.Fatal(d.err)
	}
	return d.pk, d.keys
}

// Lattice is keyring.DealLattice(names, 0), dealt once per test binary for
// each member set (in any order); the keys are shared, as Paillier's.
func Lattice(tb testing.TB, names []string) map[string]*lattice.Keys {
	tb.Helper()
	k := id(0, names)
	cache.Lock()
	if cache.lattice == nil {
		cache.lattice = map[string]*latticeKeys{}
	}
	d, ok := cache.lattice[k]
	if !ok {
		d = &latticeKeys{}
		cache.lattice[k] = d
	}
	cache.Unlock()
	d.once.Do(func() { d.keys, d.err = keyring.DealLattice(names, 0) })
	if d.err != nil {
		tb.Fatal(d.err)
	}
	return d.keys
}
