package node

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"sync"
)

// prefilled is a pool of one-use values that a filler makes ahead of time
// (internal/prefill underneath: paillier.RandomizerPool,
// lattice.ZeroPool): the node pauses it while it takes part in a job and
// closes it when the key it serves is gone.
type prefilled interface {
	Pause()
	Resume()
	Close()
}

// installed is the key installed in the node's data dir, as a keyedPool
// needs it: its id, how to open a pool of size values for it, and, when
// set, what to do once when the key is newly installed, whether or not a
// pool is kept (Paillier builds the key's tables).
type installed[P prefilled] struct {
	id    []byte
	open  func(ctx context.Context, size int) (P, error)
	onNew func()
}

// keyedPool keeps one pool for the key installed in the node's data dir,
// so that a job's encryptions take values made between jobs. The pool is
// started when the node starts with a key or the key is installed,
// replaced when the installed key changes (read through the data dir's
// Secrets, whose cache notices a changed file), paused while the node
// takes part in a job, so that it fills between jobs, and closed with the
// node. Both pools the node keeps (randomizers.go, latticezeros.go) are
// one of these; a nil *keyedPool keeps none.
type keyedPool[P prefilled] struct {
	size int    // 0: no pool, but a new key's onNew still runs
	what string // names the pool in the log
	log  *slog.Logger
	// read reads the installed key (nil, and maybe an error, when none).
	read func() (*installed[P], error)
	// dropped, when set, is given every pool closed (with mu held), so
	// that counters of replaced pools never go down.
	dropped func(P)

	mu     sync.Mutex
	ctx    context.Context // the node's life, from start
	id     []byte          // the key pool serves
	pool   P
	kept   bool // pool is set
	busy   bool
	closed bool
}

// start begins the node's life: it reads the installed key, if any, and
// starts its pool.
func (k *keyedPool[P]) start(ctx context.Context) {
	if k == nil {
		return
	}
	k.mu.Lock()
	k.ctx = ctx
	k.mu.Unlock()
	k.current()
}

// current returns the pool of the key installed now, starting it (and
// closing the pool of a key no longer installed) when the key changed; the
// zero P when the node keeps none, has no key or has stopped.
func (k *keyedPool[P]) current() P {
	var none P
	if k == nil {
		return none
	}
	key, err := k.read()
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		k.log.Warn(k.what+": the installed key cannot be read", "err", err)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closed || k.ctx == nil {
		return none
	}
	if key == nil {
		k.replace(none, false, nil)
		return none
	}
	same := bytes.Equal(k.id, key.id)
	if same && (k.kept || k.size == 0) {
		return k.pool
	}
	if !same && key.onNew != nil {
		key.onNew()
	}
	if k.size == 0 {
		k.replace(none, false, key.id)
		return none
	}
	p, err := key.open(k.ctx, k.size)
	if err != nil {
		k.log.Warn(k.what+" not started", "err", err)
		k.replace(none, false, nil)
		return none
	}
	if k.busy {
		p.Pause()
	}
	k.replace(p, true, key.id)
	return p
}

// replace closes the pool kept and keeps p (if kept) for key id instead;
// k.mu is held.
func (k *keyedPool[P]) replace(p P, kept bool, id []byte) {
	if k.kept {
		k.pool.Close()
		if k.dropped != nil {
			k.dropped(k.pool)
		}
	}
	k.pool, k.kept, k.id = p, kept, bytes.Clone(id)
}

// setBusy pauses the filler while the node takes part in a job and lets it
// fill while the node idles: the cores go to the job's steps first.
func (k *keyedPool[P]) setBusy(busy bool) {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.busy = busy
	switch {
	case !k.kept:
	case busy:
		k.pool.Pause()
	default:
		k.pool.Resume()
	}
}

// close stops the filler and drops its values; current returns the zero P
// from then on.
func (k *keyedPool[P]) close() {
	if k == nil {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closed = true
	var none P
	k.replace(none, false, nil)
}

// inspect calls f with the pool of the moment (kept false when there is
// none), with k.mu held, so that f reads the pool and the counts of pools
// dropped before it as one.
func (k *keyedPool[P]) inspect(f func(p P, kept bool)) {
	var none P
	if k == nil {
		f(none, false)
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	f(k.pool, k.kept)
}
