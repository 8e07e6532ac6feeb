package node

import (
	"context"
	"fmt"
	"io"
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
// 10,000 values), 128 KiB at 2048 bits. It stays below the some 490
// encryptions after which package paillier builds a key's wide
// fixed-base table (57 MiB at 2048 bits), so that an idle node's first
// fill does not build it: only randomisers used, and refilled, do. That
// holds for one node per process: the table's count is the process's, so
// several nodes in one process fill past it together (cohort sim and the
// demo keep no pools for that reason).
const DefaultRandomizerPool = 256

// maxRandomizerPool bounds node.yaml's randomizer_pool: 32 MiB at 2048 bits.
const maxRandomizerPool = 1 << 16

// randomizers is the node's pool of encryption randomisers for the
// threshold Paillier key installed in its data dir, so that a job's
// encryptions cost a multiplication each on its critical path
// (paillier.RandomizerPool; secureagg draws from it through
// keyring.PaillierRandomizers), kept as keyedPool says, beside the
// lattice key's pool of encryptions of zero. With eager set it also
// builds the key's wide fixed-base tables in the background as soon as it
// sees the key (node.yaml paillier_tables), whether or not it keeps a
// pool.
type randomizers struct {
	size   int // 0: the node keeps none
	log    *slog.Logger
	pool   *keyedPool[*paillier.RandomizerPool] // nil: no pool and no eager tables
	zeros  *latticeZeros                        // nil: the node keeps none
	tables sync.WaitGroup                       // the eager table builds, waited for by close
	// built says the eager build of the installed key's tables is done,
	// for the metrics: an operator (or scripts/local-cluster.sh) samples
	// the node's memory at its level once it is set.
	built atomic.Bool
	// taken and computed add up the counts of pools replaced, so that the
	// metrics' counters never go down; pool's lock guards them.
	taken, computed int64
}

func newRandomizers(size int, eager bool, secrets job.Secrets, log *slog.Logger) *randomizers {
	r := &randomizers{size: size, log: log}
	if size == 0 && !eager {
		return r
	}
	r.pool = &keyedPool[*paillier.RandomizerPool]{size: size, what: "randomiser pool", log: log,
		read: func() (*installed[*paillier.RandomizerPool], error) {
			k, err := keyring.ReadPaillier(secrets)
			if k == nil {
				return nil, err
			}
			pk := k.Public()
			key := &installed[*paillier.RandomizerPool]{id: pk.KeyID[:], open: func(ctx context.Context, size int) (*paillier.RandomizerPool, error) {
				return paillier.NewRandomizerPool(ctx, &pk.PublicKey, nil, size)
			}}
			if eager {
				key.onNew = func() { r.buildTables(pk) }
			}
			return key, err
		},
		dropped: func(p *paillier.RandomizerPool) {
			st := p.Stats()
			r.taken += st.Taken
			r.computed += st.Computed
		}}
	return r
}

// start begins the node's life: it reads the installed keys, if any, and
// starts their pools.
func (r *randomizers) start(ctx context.Context) {
	r.pool.start(ctx)
	r.zeros.start(ctx)
}

// current returns the Paillier pool of the key installed now (nil when
// the node keeps none, has no key or has stopped).
func (r *randomizers) current() *paillier.RandomizerPool { return r.pool.current() }

// buildTables builds pk's wide tables in the background; the pool's lock
// is held. The build cannot be interrupted (about 2.4 s of one core at
// 2048 bits); close waits for it.
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

// setBusy pauses both fillers while the node takes part in a job.
func (r *randomizers) setBusy(busy bool) {
	r.zeros.setBusy(busy)
	r.pool.setBusy(busy)
}

// close stops the fillers and drops their values, and waits for a table
// build under way; current returns nil from then on.
func (r *randomizers) close() {
	r.pool.close()
	r.zeros.close()
	r.tables.Wait()
}

// stats reports the Paillier pool of the moment (ok false when there is
// none), with counts since the node started.
func (r *randomizers) stats() (st paillier.PoolStats, ok bool) {
	r.pool.inspect(func(p *paillier.RandomizerPool, kept bool) {
		if kept {
			st, ok = p.Stats(), true
		}
		st.Taken += r.taken
		st.Computed += r.computed
	})
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
		"Memory the lattice encryptions of zero and smudging noise ready in the node's pool hold.", nil, nil)
	latticeNoiseReadyDesc = prometheus.NewDesc("cohort_lattice_noise_ready",
		"Polynomials of decryption shares' smudging noise ready in the node's lattice pool (2 × lattice_pool at most).", nil, nil)
	tablesBytesDesc = prometheus.NewDesc("cohort_paillier_tables_bytes",
		"Memory the process's wide Paillier fixed-base tables hold outside the Go heap (part of RSS, not of the go_memstats figures).", nil, nil)
	tablesBuiltDesc = prometheus.NewDesc("cohort_paillier_tables_built",
		"1 once the node has built the installed key's wide fixed-base tables at start (node.yaml paillier_tables: eager): its memory is at its level.", nil, nil)
)

// Describe and Collect make the pool a metrics collector.
func (r *randomizers) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{randomizersReadyDesc, randomizersSizeDesc, randomizersBytesDesc, randomizersTakenDesc, randomizersComputedDesc, tablesBytesDesc, tablesBuiltDesc, latticeZerosReadyDesc, latticeZerosBytesDesc, latticeNoiseReadyDesc} {
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
	zst, _ := latticeZeroStats(r.zeros)
	ch <- prometheus.MustNewConstMetric(latticeZerosReadyDesc, prometheus.GaugeValue, float64(zst.Ready))
	ch <- prometheus.MustNewConstMetric(latticeZerosBytesDesc, prometheus.GaugeValue, float64(zst.Bytes))
	ch <- prometheus.MustNewConstMetric(latticeNoiseReadyDesc, prometheus.GaugeValue, float64(zst.Noise.Ready))
}
