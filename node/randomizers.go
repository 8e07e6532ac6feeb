package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
)

// DefaultRandomizerPool is how many Paillier encryption randomisers a node
// keeps ready when node.yaml does not say: enough for one aggregation of
// about 18,000 values at sum's fixed point on five parties (a round
// encrypts its packed values with one randomiser per ciphertext, 137 for
// 10,000 values), 128 KiB at 2048 bits. It stays below the 490
// encryptions after which package paillier builds a key's wide
// fixed-base table (57 MiB at 2048 bits), so that an idle node's first
// fill does not build it: only randomisers used, and refilled, do.
const DefaultRandomizerPool = 256

// maxRandomizerPool bounds node.yaml's randomizer_pool: 32 MiB at 2048 bits.
const maxRandomizerPool = 1 << 16

// randomizers is the node's pool of encryption randomisers for the
// threshold Paillier key installed in its data dir, so that a job's
// encryptions cost a multiplication each on its critical path
// (paillier.RandomizerPool; secureagg draws from it through
// keyring.PaillierRandomizers). It is started when the node starts with a
// key or the key is installed, replaced when the installed key changes
// (it is read through the data dir's Secrets, whose cache notices a
// changed file), paused while the node takes part in a job, so that it
// fills between jobs, and closed with the node. With eager set it also builds the key's wide
// fixed-base tables in the background as soon as it sees the key
// (node.yaml paillier_tables), whether or not it keeps a pool.
type randomizers struct {
	size    int // 0: the node keeps none
	eager   bool
	secrets job.Secrets
	log     *slog.Logger
	tables  sync.WaitGroup // the eager table builds, waited for by close
	// built says the eager build of the installed key's tables is done,
	// for the metrics: an operator (or scripts/local-cluster.sh) samples
	// the node's memory at its level once it is set.
	built atomic.Bool

	mu     sync.Mutex
	ctx    context.Context // the node's life, from start
	keyID  []byte          // the key pool serves
	pool   *paillier.RandomizerPool
	busy   bool
	closed bool
	// taken and computed add up the counts of pools replaced, so that the
	// metrics' counters never go down.
	taken, computed int64
	// zeros is the lattice key's pool (latticezeros.go), started, paused
	// and closed with this one; nil when the node keeps none.
	zeros *latticeZeros
}

func newRandomizers(size int, eager bool, secrets job.Secrets, log *slog.Logger) *randomizers {
	return &randomizers{size: size, eager: eager, secrets: secrets, log: log}
}

// start begins the node's life: it reads the installed key, if any, and
// starts its pool.
func (r *randomizers) start(ctx context.Context) {
	r.mu.Lock()
	r.ctx = ctx
	r.mu.Unlock()
	r.current()
	r.zeros.start(ctx)
}

// current returns the pool of the key installed now, starting it (and
// closing the pool of a key no longer installed) when the key changed; nil
// when the node keeps no pool, has no key or has stopped.
func (r *randomizers) current() *paillier.RandomizerPool {
	if r.size == 0 && !r.eager {
		return nil
	}
	k, err := keyring.ReadPaillier(r.secrets)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		r.log.Warn("randomiser pool: the installed threshold key cannot be read", "err", err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed || r.ctx == nil {
		return nil
	}
	if k == nil {
		r.replace(nil, nil)
		return nil
	}
	pk := k.Public()
	if bytes.Equal(r.keyID, pk.KeyID[:]) && (r.pool != nil || r.size == 0) {
		return r.pool
	}
	if r.eager && !bytes.Equal(r.keyID, pk.KeyID[:]) {
		r.buildTables(pk)
	}
	if r.size == 0 {
		r.replace(nil, pk.KeyID[:])
		return nil
	}
	p, err := paillier.NewRandomizerPool(r.ctx, &pk.PublicKey, nil, r.size)
	if err != nil {
		r.log.Warn("randomiser pool not started", "err", err)
		r.replace(nil, nil)
		return nil
	}
	if r.busy {
		p.Pause()
	}
	r.replace(p, pk.KeyID[:])
	return p
}

// buildTables builds pk's wide tables in the background; r.mu is held.
// The build cannot be interrupted (about 2.4 s of one core at 2048 bits);
// close waits for it.
func (r *randomizers) buildTables(pk *paillier.ThresholdPublicKey) {
	r.built.Store(false)
	r.tables.Add(1)
	go func() {
		defer r.tables.Done()
		start := time.Now()
		if pk.PrecomputeTables() {
			r.built.Store(true)
			r.log.Info("the key's wide fixed-base tables are built", "took", time.Since(start).Round(time.Millisecond))
		} else {
			r.log.Warn("the key's wide fixed-base tables were not built: the process's table budget has no room for them")
		}
	}()
}

// replace closes the pool kept and keeps p for key instead; r.mu is held.
func (r *randomizers) replace(p *paillier.RandomizerPool, key []byte) {
	if old := r.pool; old != nil {
		old.Close()
		st := old.Stats()
		r.taken += st.Taken
		r.computed += st.Computed
	}
	r.pool, r.keyID = p, bytes.Clone(key)
}

// setBusy pauses the filler while the node takes part in a job and lets it
// fill while the node idles: the cores go to the job's steps first.
func (r *randomizers) setBusy(busy bool) {
	r.zeros.setBusy(busy)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.busy = busy
	if r.pool == nil {
		return
	}
	if busy {
		r.pool.Pause()
	} else {
		r.pool.Resume()
	}
}

// close stops the filler and drops the randomisers, and waits for a table
// build under way; current returns nil from then on.
func (r *randomizers) close() {
	r.mu.Lock()
	r.closed = true
	r.replace(nil, nil)
	r.mu.Unlock()
	r.zeros.close()
	r.tables.Wait()
}

// stats reports the pool of the moment (ok false when there is none), with
// counts since the node started.
func (r *randomizers) stats() (st paillier.PoolStats, ok bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pool != nil {
		st, ok = r.pool.Stats(), true
	}
	st.Taken += r.taken
	st.Computed += r.computed
	return st, ok
}

// randomizerSecrets are the data dir's Secrets that also offer the node's
// pools to the jobs' sessions (keyring.RandomizerSource,
// keyring.LatticeZeroSource).
type randomizerSecrets struct {
	job.Secrets
	pools *randomizers
}

func (s randomizerSecrets) Randomizers() *paillier.RandomizerPool { return s.pools.current() }

// LatticeZeros offers the node's pool of lattice encryptions of zero
// (keyring.LatticeZeroSource).
func (s randomizerSecrets) LatticeZeros() *lattice.ZeroPool { return s.pools.zeros.current() }

// Dir passes the data dir's job scratch through (job.ScratchDir): wrapping
// the Secrets must not hide it, or sjc could not spill under its budget.
func (s randomizerSecrets) Dir(name string) (string, error) {
	sd, ok := s.Secrets.(job.ScratchDir)
	if !ok {
		return "", fmt.Errorf("scratch %s: these secrets are not kept in a directory", name)
	}
	return sd.Dir(name)
}

// WriteSecretStream passes the data dir's streamed writes through
// (job.SecretStreamer), so that sjc-predict's per-row predictions are
// written as they are made, not held whole.
func (s randomizerSecrets) WriteSecretStream(name string, write func(w io.Writer) error) error {
	return job.WriteSecretFrom(s.Secrets, name, write)
}

var (
	randomizersReadyDesc = prometheus.NewDesc("cohort_randomizers_ready",
		"Paillier encryption randomisers ready in the node's pool.", nil, nil)
	randomizersSizeDesc = prometheus.NewDesc("cohort_randomizers_size",
		"The bound on the node's pool of Paillier encryption randomisers (node.yaml randomizer_pool).", nil, nil)
	randomizersBytesDesc = prometheus.NewDesc("cohort_randomizers_bytes",
		"Memory the randomisers ready in the node's pool hold.", nil, nil)
	randomizersTakenDesc = prometheus.NewDesc("cohort_randomizers_taken_total",
		"Encryptions that took their randomiser from the node's pool.", nil, nil)
	randomizersComputedDesc = prometheus.NewDesc("cohort_randomizers_computed_total",
		"Encryptions given the node's pool that computed their randomiser because it was empty.", nil, nil)
	latticeZerosReadyDesc = prometheus.NewDesc("cohort_lattice_zeros_ready",
		"Lattice encryptions of zero ready in the node's pool (node.yaml lattice_pool).", nil, nil)
	latticeZerosBytesDesc = prometheus.NewDesc("cohort_lattice_zeros_bytes",
		"Memory the lattice encryptions of zero ready in the node's pool hold.", nil, nil)
	tablesBytesDesc = prometheus.NewDesc("cohort_paillier_tables_bytes",
		"Memory the process's wide Paillier fixed-base tables hold outside the Go heap (part of RSS, not of the go_memstats figures).", nil, nil)
	tablesBuiltDesc = prometheus.NewDesc("cohort_paillier_tables_built",
		"1 once the node has built the installed key's wide fixed-base tables at start (node.yaml paillier_tables: eager): its memory is at its level.", nil, nil)
)

// Describe and Collect make the pool a metrics collector.
func (r *randomizers) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{randomizersReadyDesc, randomizersSizeDesc, randomizersBytesDesc, randomizersTakenDesc, randomizersComputedDesc, tablesBytesDesc, tablesBuiltDesc, latticeZerosReadyDesc, latticeZerosBytesDesc} {
		ch <- d
	}
}

func (r *randomizers) Collect(ch chan<- prometheus.Metric) {
	st, _ := r.stats()
	ch <- prometheus.MustNewConstMetric(randomizersReadyDesc, prometheus.GaugeValue, float64(st.Ready))
	ch <- prometheus.MustNewConstMetric(randomizersSizeDesc, prometheus.GaugeValue, float64(r.size))
	ch <- prometheus.MustNewConstMetric(randomizersBytesDesc, prometheus.GaugeValue, float64(st.Bytes))
	ch <- prometheus.MustNewConstMetric(randomizersTakenDesc, prometheus.CounterValue, float64(st.Taken))
	ch <- prometheus.MustNewConstMetric(randomizersComputedDesc, prometheus.CounterValue, float64(st.Computed))
	ch <- prometheus.MustNewConstMetric(tablesBytesDesc, prometheus.GaugeValue, float64(paillier.MappedFixedBaseBytes()))
	built := 0.0
	if r.built.Load() {
		built = 1
	}
	ch <- prometheus.MustNewConstMetric(tablesBuiltDesc, prometheus.GaugeValue, built)
	zst, _ := r.zeros.stats()
	ch <- prometheus.MustNewConstMetric(latticeZerosReadyDesc, prometheus.GaugeValue, float64(zst.Ready))
	ch <- prometheus.MustNewConstMetric(latticeZerosBytesDesc, prometheus.GaugeValue, float64(zst.Bytes))
}
