package bicluster

import (
	"math"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/secureagg"
)

// maxBeta bounds params.beta: β² in the pair test's fixed point stays
// within a few bits (a representative RMS difference of 100 times the
// mean merges anything anyway).
const maxBeta = 100

// JobParams are the job's spec params; zero fields take DefaultParams.
type JobParams struct {
	Divergence string  `yaml:"divergence"`
	Delta      float64 `yaml:"delta"`
	MinRows    int     `yaml:"min_rows"`
	MinCols    int     `yaml:"min_cols"`
	MaxIter    int     `yaml:"max_iter"`
	Mode       string  `yaml:"mode"`
	Beta       float64 `yaml:"beta"`
	FracBits   int     `yaml:"frac_bits"`
	ValueBits  int     `yaml:"value_bits"`
	TimeoutMS  int64   `yaml:"timeout_ms"`
	// MinGroupParties is the fewest parties whose local biclusters a
	// merge group must hold for its sums to be decrypted (default 3, or
	// the job's parties when fewer; at least 2, minContributors). A
	// group's sums are over its contributors alone, so a node's floor on
	// parties applies to them: the job declares this least to every
	// node's policy at admission (job.Use.LeastParties), and groups below
	// it are left out, the same at every party, instead of failing the
	// merge at a node whose floor they miss.
	MinGroupParties int `yaml:"min_group_parties"`
	// Backend is the aggregations' cryptosystem: auto (default), paillier
	// or lattice (secureagg.ParseBackend). The pair test decrypts with the
	// threshold Paillier key whatever the backend.
	Backend string `yaml:"backend"`
}

// jobConfig is the validated params.
type jobConfig struct {
	p                   Params
	fracBits, valueBits int
	timeoutMS           int64
	backend             secureagg.Backend
	minGroupParties     int
}

// groupKeep is what a merge group needs to be aggregated: rows by its
// members' public counts and contributing parties.
type groupKeep struct{ rows, parties int }

func (c *jobConfig) keep() groupKeep { return groupKeep{rows: c.p.MinRows, parties: c.minGroupParties} }

// defaultMinGroupParties is the default policy's floor on parties, so that
// a job the default policy admits leaves out what it would refuse.
const defaultMinGroupParties = 3

// Fixed point: Phoenix sums reals (barycenters, means) under a Paillier
// key whose plaintexts are integers (Ahmad and Khokhar, "Phoenix", §3.3
// and §3.5), so every aggregated value is encoded as round(x·2^16) and
// must stay below 2^62 in magnitude: a party's
// column sums (Den_j = Σ max(x,0) over its rows, Num_j ≤ Den_j, and the
// merge's per-group column sums) may reach 2^46 ≈ 7·10^13 before the
// party's input is refused (secureagg.ErrRange, naming it). 16 fractional
// bits give the same biclusters as float sums (TestPhoenixFixedPoint); the
// packing reserves log2(parties) more bits per slot for the sum.
const (
	defaultFracBits  = 16
	defaultValueBits = 62
)

func parseJobParams(spec *job.Spec) (*jobConfig, error) {
	d := DefaultParams()
	jp := JobParams{Divergence: string(d.Divergence), Delta: d.Delta, MinRows: d.MinRows, MinCols: d.MinCols,
		MaxIter: d.MaxIter, Mode: string(d.Mode), Beta: d.Beta, FracBits: defaultFracBits,
		ValueBits: defaultValueBits}
	if err := spec.DecodeParams(&jp); err != nil {
		return nil, err
	}
	p := d
	var err error
	if p.Divergence, err = ParseDivergence(jp.Divergence); err != nil {
		return nil, spec.Errorf("params.divergence", "%v", err)
	}
	mode := strings.ReplaceAll(jp.Mode, "_", "-")
	if p.Mode, err = ParseMode(mode); err != nil {
		return nil, spec.Errorf("params.mode", "must be exact or mean_of_means, not %q", jp.Mode)
	}
	switch {
	case !(jp.Delta > 0) || math.IsInf(jp.Delta, 0):
		return nil, spec.Errorf("params.delta", "must be a positive number, not %v", jp.Delta)
	case jp.MinRows < 1 || jp.MinRows > 1<<20:
		return nil, spec.Errorf("params.min_rows", "must be in [1, %d], not %d", 1<<20, jp.MinRows)
	case jp.MinCols < 1 || jp.MinCols > 1<<20:
		return nil, spec.Errorf("params.min_cols", "must be in [1, %d], not %d", 1<<20, jp.MinCols)
	case jp.MaxIter < 1 || jp.MaxIter > 100:
		return nil, spec.Errorf("params.max_iter", "must be in [1, 100], not %d", jp.MaxIter)
	case !(jp.Beta >= 0) || jp.Beta > maxBeta:
		return nil, spec.Errorf("params.beta", "must be in [0, %d], not %v", maxBeta, jp.Beta)
	case jp.FracBits < 0 || jp.FracBits > 60:
		return nil, spec.Errorf("params.frac_bits", "must be in [0, 60], not %d", jp.FracBits)
	case jp.ValueBits <= jp.FracBits || jp.ValueBits > 1000:
		return nil, spec.Errorf("params.value_bits", "must be in [frac_bits+1, 1000], not %d", jp.ValueBits)
	}
	if err := spec.CheckTimeoutMS(jp.TimeoutMS); err != nil {
		return nil, err
	}
	backend, err := secureagg.ParseBackend(jp.Backend)
	if err != nil {
		return nil, spec.Errorf("params.backend", "%v", err)
	}
	minGroup, err := minGroupParties(spec, jp.MinGroupParties)
	if err != nil {
		return nil, err
	}
	p.Delta, p.MinRows, p.MinCols, p.MaxIter, p.Beta = jp.Delta, jp.MinRows, jp.MinCols, jp.MaxIter, jp.Beta
	if err := p.Check(); err != nil {
		return nil, spec.Errorf("params", "%v", err)
	}
	return &jobConfig{p: p, fracBits: jp.FracBits, valueBits: jp.ValueBits, timeoutMS: jp.TimeoutMS, backend: backend,
		minGroupParties: minGroup}, nil
}

// minGroupParties checks params.min_group_parties (0: the default, or the
// job's parties when fewer).
func minGroupParties(spec *job.Spec, set int) (int, error) {
	parties := len(spec.PartyNames())
	if set == 0 {
		return max(minContributors, min(defaultMinGroupParties, parties)), nil
	}
	if set < minContributors || set > max(parties, minContributors) {
		return 0, spec.Errorf("params.min_group_parties", "must be in [%d, the job's parties], not %d", minContributors, set)
	}
	return set, nil
}
