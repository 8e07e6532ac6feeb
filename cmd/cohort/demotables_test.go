package main

import (
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
)

// Under the demo's table budget a key's encryptions run on its small
// table: a batch large enough to build the wide one at once (2000
// encryptions, enough to repay it at 1024 bits as at 2048) builds none;
// the budget before is restored. Not parallel: the budget is the
// process's.
func TestDemoTablesKeepWideTablesOut(t *testing.T) {
	_, keys, err := keyring.Deal(rand.Reader, 1024, []string{"a", "b", "c"}, 0)
	if err != nil {
		t.Fatal(err)
	}
	pk := &keys["a"].Public().PublicKey
	ms := make([]*big.Int, 2000)
	for i := range ms {
		ms[i] = big.NewInt(int64(i))
	}
	restore := demoTables()
	mapped := paillier.MappedFixedBaseBytes()
	cs, err := pk.EncryptMany(rand.Reader, ms)
	if err != nil {
		restore()
		t.Fatal(err)
	}
	if now := paillier.MappedFixedBaseBytes(); now != mapped {
		t.Errorf("2000 encryptions under the demo's budget mapped %d bytes of tables", now-mapped)
	}
	restore()
	if prev := paillier.SetFixedBaseBudget(demoTableBudget); prev == demoTableBudget {
		t.Error("the budget before the demo was not restored")
	} else {
		paillier.SetFixedBaseBudget(prev)
	}
	if len(cs) != len(ms) {
		t.Errorf("%d ciphertexts for %d values", len(cs), len(ms))
	}
}
