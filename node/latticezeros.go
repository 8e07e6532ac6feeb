package node

import (
	"context"
	"log/slog"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// DefaultLatticePool is how many lattice encryptions of zero a node keeps
// ready when node.yaml does not say: one contribution of a million values
// of sum's fixed point on five parties (63 ciphertexts), 24 MiB under
// lattice.ParamsBGV13 (384 KiB each). Filling it takes about 3.4 ms of
// one core per encryption of zero, 0.2 s in all. The pool also keeps
// twice as many polynomials of smudging noise for the node's decryption
// shares (two shares of 64 ciphertexts, 192 KiB each: 24 MiB more).
const DefaultLatticePool = 64

// maxLatticePool bounds node.yaml's lattice_pool: 384 MiB of encryptions
// of zero and as much noise.
const maxLatticePool = 1024

// latticeZeros is the node's pool of encryptions of zero under the lattice
// key installed in its data dir (lattice.ZeroPool; secureagg takes from it
// through keyring.LatticeZeros), so that a contribution's public-key
// encryption and its decryption shares' smudging noise are off the
// round's critical path. It is kept like the
// Paillier randomisers (keyedPool), and started, paused and closed with
// them. A nil *latticeZeros keeps none.
type latticeZeros = keyedPool[*lattice.ZeroPool]

func newLatticeZeros(size int, secrets job.Secrets, log *slog.Logger) *latticeZeros {
	if size == 0 {
		return nil
	}
	return &latticeZeros{size: size, what: "lattice zero pool", log: log, read: func() (*installed[*lattice.ZeroPool], error) {
		k, err := keyring.ReadLattice(secrets)
		if k == nil {
			return nil, err
		}
		id := k.ID()
		return &installed[*lattice.ZeroPool]{id: id[:], open: func(ctx context.Context, size int) (*lattice.ZeroPool, error) {
			return lattice.NewZeroPool(ctx, k.PublicKey, size)
		}}, err
	}}
}

// latticeZeroStats reports z's pool of the moment (ok false when there is
// none).
func latticeZeroStats(z *latticeZeros) (st lattice.ZeroPoolStats, ok bool) {
	z.inspect(func(p *lattice.ZeroPool, kept bool) {
		if kept {
			st, ok = p.Stats(), true
		}
	})
	return st, ok
}
