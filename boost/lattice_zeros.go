package boost

// The encryptions of zero on the lattice path: the class holder's
// gradient chunks and the other parties' masks. A node
// keeps a pool of them (lattice.ZeroPool, node.yaml lattice_pool), filled
// while the node runs no job and paused while it takes part in one; the
// class holder's gradient encryptions take from it (each encryption of
// zero masks one chunk and is then forgotten: lattice.ZeroPool says why
// the ciphertexts are distributed as without it), and compute the rest.
//
// Within a level the class holder encrypts its down messages and then
// waits while the other parties sum their columns and the decryptors
// make their shares; its cores are idle meanwhile. So it resumes the
// node's filler once its down messages are out and pauses it again
// before it encrypts the next level's: the pool fills between levels
// and trees, bounded by the node's setting, on cores the class holder
// leaves idle, and the next level's encryptions are partly done. When the
// job ends the node resumes or pauses the filler as it does after any
// job.
//
// A table's party is idle the other way round: it waits while the class
// holder encrypts the level's down message, then sums its columns, each
// column's sum in each layout masked by a fresh encryption (about 13 % of
// the CPU on a9a, docs/boost.md). So it resumes its node's filler while it
// waits for the down message and pauses it once the message is in; its
// masks take their encryptions of zero from the pool (BinSummer.UseZeros,
// each used once) and compute the rest. A down message summed as its
// parts come (lattice_pipe.go) pauses the filler for each part's products
// and resumes it while the next part comes: the products are the level's
// critical path, the filler's work can wait for idle cores. (Another job the node takes part in at the same time shares the
// cores with the filler while this one waits: the node's pause is per
// node, not per job.)

import (
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// pauseZeros keeps the filler of z (nil: none) off the cores.
func pauseZeros(z *lattice.ZeroPool) {
	if z != nil {
		z.Pause()
	}
}

// resumeZeros lets the filler of z (nil: none) fill the pool.
func resumeZeros(z *lattice.ZeroPool) {
	if z != nil {
		z.Resume()
	}
}

// latticeZeros is the node's pool of encryptions of zero under the job's
// lattice key, or nil when the node keeps none or its pool serves
// another key.
func (s *session) latticeZeros() *lattice.ZeroPool {
	return keyring.LatticeZeros(s.p.Secrets(), s.lkeys)
}
