package boost

import (
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/lattice"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// LatticeInProcess is the lattice path's decryption in one process with
// every member's keys at hand (tests and benchmarks, or one operator who
// holds the whole consortium, as keyring.DealLattice's callers do): each
// table's bin sums are decrypted by the first quorum of members with real
// threshold decryption shares, each member vetting the ciphertexts against
// the digest their maker (the table's party, a member of the key) names,
// as in the job. Job names the contexts. Not safe for concurrent use.
func LatticeInProcess(g *joinprop.Graph, keys map[string]*lattice.Keys, job string) (LatticeCrypto, error) {
	names := slices.Sorted(maps.Keys(keys))
	if len(names) == 0 {
		return LatticeCrypto{}, fmt.Errorf("boost: no lattice keys")
	}
	pk := keys[names[0]].PublicKey
	points := make([]int, len(names))
	for i := range points {
		points[i] = i + 1
	}
	plan, err := lattice.PlanSingle(pk, points)
	if err != nil {
		return LatticeCrypto{}, err
	}
	decs := map[int]*lattice.Decryptor{}
	for _, m := range plan.Quorums[0] {
		k := keys[pk.Members[m-1]]
		if k == nil {
			return LatticeCrypto{}, fmt.Errorf("boost: no lattice keys of member %d", m)
		}
		if decs[m], err = lattice.NewDecryptor(k); err != nil {
			return LatticeCrypto{}, err
		}
	}
	var mu sync.Mutex
	round := 0
	open := func(t int, l *lattice.BinLayout, cts []*rlwe.Ciphertext) ([][]int64, [][]int64, error) {
		mu.Lock()
		defer mu.Unlock()
		from := pk.Point(g.Tables[t].Party)
		if from == 0 {
			return nil, nil, fmt.Errorf("boost: party of table %q holds no lattice key", g.Tables[t].Name)
		}
		ctx := lattice.Context{Key: pk.ID(), Job: job, Phase: "bins", Round: round}
		round++
		target, err := lattice.NewBinTarget(pk, ctx, from, l, cts)
		if err != nil {
			return nil, nil, err
		}
		want := target.Inputs[0].Digest // what the maker would tell each decryptor (BinSumsDigest)
		o, err := lattice.NewBinOpening(pk, l, plan, target, cts)
		if err != nil {
			return nil, nil, err
		}
		// Each member vets and makes its share on a core of its own, as
		// the decryptors do on their nodes in the job.
		quorum := plan.Quorums[0]
		shares := make([]*lattice.DecryptionShare, len(quorum))
		if err := onCores(len(quorum), func() (func(i int) error, error) {
			return func(i int) error {
				m := quorum[i]
				tg, err := decs[m].BinTarget(ctx, from, l, cts, want)
				if err != nil {
					return err
				}
				shares[i], err = decs[m].GenShare(tg, plan, 0)
				return err
			}, nil
		}); err != nil {
			return nil, nil, err
		}
		for _, sh := range shares {
			if err := o.Add(sh); err != nil {
				return nil, nil, err
			}
		}
		gs, hs, _, err := o.Open()
		return gs, hs, err
	}
	return LatticeCrypto{PK: pk, Open: open}, nil
}
