package keyring

import (
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/lattice"
)

// LatticeZeroSource is what a job's Secrets may also offer: a pool of
// encryptions of zero (lattice.ZeroPool) under the lattice key installed
// in the data dir, owned by the node as RandomizerSource's pool is (filled
// while it runs no job, bounded, closed when it stops or the key changes).
// A job never closes it. Nil means the node keeps none.
type LatticeZeroSource interface {
	LatticeZeros() *lattice.ZeroPool
}

// LatticeZeros returns the pool s offers for k's public key, or nil when s
// offers none or its pool serves another key. Encryptions that take from
// it are distributed exactly as without it (see lattice.ZeroPool).
func LatticeZeros(s job.Secrets, k *lattice.Keys) *lattice.ZeroPool {
	src, ok := s.(LatticeZeroSource)
	if !ok || k == nil || k.PublicKey == nil {
		return nil
	}
	p := src.LatticeZeros()
	if p == nil || !p.Serves(k.PublicKey) {
		return nil
	}
	return p
}
