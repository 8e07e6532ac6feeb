package node

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
)

// DefaultLatticePool is how many lattice encryptions of zero a node keeps
// ready when node.yaml does not say: one contribution of a million values
// of sum's fixed point on five parties (63 ciphertexts), 24 MiB under
// lattice.ParamsBGV13 (384 KiB each). Filling it takes about 3.4 ms of
// one core per encryption of zero, 0.2 s in all.
const DefaultLatticePool = 64

// maxLatticePool bounds node.yaml's lattice_pool: 384 MiB.
const maxLatticePool = 1024

// latticeZeros is the node's pool of encryptions of zero under the lattice
// key installed in its data dir (lattice.ZeroPool; secureagg takes from it
// through keyring.LatticeZeros), so that a contribution's public-key
// encryption is off the round's critical path. It is owned like the
// Paillier randomisers (randomizers, which starts, pauses and closes it
// with its own): started when the node starts or the key is installed,
// replaced when the installed key changes, paused while the node takes
// part in a job, closed with the node. A nil *latticeZeros keeps none.
type latticeZeros struct {
	size    int
	secrets job.Secrets
	log     *slog.Logger

	mu     sync.Mutex
	ctx    context.Context // the node's life, from start
	key    lattice.KeyID   // the key pool serves
	pool   *lattice.ZeroPool
	busy   bool
	closed bool
}

func newLatticeZeros(size int, secrets job.Secrets, log *slog.Logger) *latticeZeros {
	if size == 0 {
		return nil
	}
	return &latticeZeros{size: size, secrets: secrets, log: log}
}

func (z *latticeZeros) start(ctx context.Context) {
	if z == nil {
		return
	}
	z.mu.Lock()
	z.ctx = ctx
	z.mu.Unlock()
	z.current()
}

// current returns the pool of the lattice key installed now, starting it
// (and closing the pool of a key no longer installed) when the key
// changed; nil when the node keeps none, has no key or has stopped.
func (z *latticeZeros) current() *lattice.ZeroPool {
	if z == nil {
		return nil
	}
	k, err := keyring.ReadLattice(z.secrets)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		z.log.Warn("lattice zero pool: the installed lattice key cannot be read", "err", err)
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.closed || z.ctx == nil {
		return nil
	}
	if k == nil {
		z.replace(nil, lattice.KeyID{})
		return nil
	}
	if z.pool != nil && z.key == k.ID() {
		return z.pool
	}
	p, err := lattice.NewZeroPool(z.ctx, k.PublicKey, z.size)
	if err != nil {
		z.log.Warn("lattice zero pool not started", "err", err)
		z.replace(nil, lattice.KeyID{})
		return nil
	}
	if z.busy {
		p.Pause()
	}
	z.replace(p, k.ID())
	return p
}

// replace closes the pool kept and keeps p for key instead; z.mu is held.
func (z *latticeZeros) replace(p *lattice.ZeroPool, key lattice.KeyID) {
	if z.pool != nil {
		z.pool.Close()
	}
	z.pool, z.key = p, key
}

// setBusy pauses the filler while the node takes part in a job.
func (z *latticeZeros) setBusy(busy bool) {
	if z == nil {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.busy = busy
	switch {
	case z.pool == nil:
	case busy:
		z.pool.Pause()
	default:
		z.pool.Resume()
	}
}

// close stops the filler and drops the encryptions of zero; current
// returns nil from then on.
func (z *latticeZeros) close() {
	if z == nil {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	z.closed = true
	z.replace(nil, lattice.KeyID{})
}

// stats reports the pool of the moment (ok false when there is none).
func (z *latticeZeros) stats() (st lattice.ZeroPoolStats, ok bool) {
	if z == nil {
		return st, false
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.pool == nil {
		return st, false
	}
	return z.pool.Stats(), true
}
