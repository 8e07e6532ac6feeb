package quantile

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/mpc/mpcjob"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the quantile job.
type Kind struct{}

// UsesThresholdKey: every round is a secure aggregation under the
// consortium's threshold key (job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

const (
	// maxQuantiles bounds params.quantiles: each is one slot per round.
	maxQuantiles = 100
	// maxRetries bounds params.retries.
	maxRetries = 20
	// countBits bounds a party's row count: 2^40 rows.
	countBits = 40
	// maxRounds bounds the successful rounds: round 0 (which may count at
	// a range instead of halving) and 64 halvings of the key space close
	// every bracket; more means a bug, not a slow search.
	maxRounds = 70
)

// Params are the job's parameters (spec params).
type Params struct {
	// Column is the numeric column every party holds (required).
	Column string `yaml:"column"`
	// Quantiles are the q in (0, 1) to find, distinct (default [0.5]).
	Quantiles []float64 `yaml:"quantiles"`
	// Precision is the absolute tolerance of each value, in the column's
	// units (default 0.01; 0 for the exact value).
	Precision float64 `yaml:"precision"`
	// Range is an optional public [a, b] that likely holds the quantiles:
	// round 0 counts at a and b, which saves the rounds that find the order
	// of magnitude. A wrong range costs rounds, not precision.
	Range []float64 `yaml:"range"`
	// Retries is how many times in a row a round that produced no counts is
	// re-run before the job fails (default 5).
	Retries int `yaml:"retries"`
	// TimeoutMS is how long parties have for one round (default: the
	// node's step timeout).
	TimeoutMS int64 `yaml:"timeout_ms"`
	// Backend is the counting rounds' cryptosystem: auto (default),
	// paillier or lattice (secureagg.ParseBackend).
	Backend string `yaml:"backend"`
	// Noise makes the quantiles differentially private (the package doc's
	// Differential privacy): it needs Range and a precision > 0, which fix
	// the rounds before any count is seen.
	Noise *secureagg.NoiseSpec `yaml:"noise"`

	backend secureagg.Backend
	rounds  int // of a noised search
}

func parseParams(spec *job.Spec) (*Params, error) {
	p := &Params{Quantiles: []float64{0.5}, Precision: 0.01, Retries: 5}
	if err := spec.DecodeParams(p); err != nil {
		return nil, err
	}
	if p.Column == "" {
		return nil, spec.Errorf("params.column", "the quantile job needs the name of a numeric column")
	}
	if len(p.Quantiles) == 0 || len(p.Quantiles) > maxQuantiles {
		return nil, spec.Errorf("params.quantiles", "must list 1 to %d quantiles, not %d", maxQuantiles, len(p.Quantiles))
	}
	for i, q := range p.Quantiles {
		if !(q >= 0 && q <= 1) {
			return nil, spec.Errorf(fmt.Sprintf("params.quantiles[%d]", i), "must be in [0, 1], not %v", q)
		}
		if q == 0 || q == 1 {
			return nil, spec.Errorf(fmt.Sprintf("params.quantiles[%d]", i), "q = 0 and q = 1 are the pooled extremes, "+
				"one row's exact value, which this job never releases (floors.min_k)")
		}
		if slices.Contains(p.Quantiles[:i], q) {
			return nil, spec.Errorf(fmt.Sprintf("params.quantiles[%d]", i), "%v is listed twice", q)
		}
	}
	if !(p.Precision >= 0) || math.IsInf(p.Precision, 0) {
		return nil, spec.Errorf("params.precision", "must be a finite number ≥ 0 (0 for the exact value), not %v", p.Precision)
	}
	if p.Range != nil {
		if len(p.Range) != 2 || math.IsNaN(p.Range[0]) || math.IsInf(p.Range[0], 0) ||
			math.IsNaN(p.Range[1]) || math.IsInf(p.Range[1], 0) || !(p.Range[0] < p.Range[1]) {
			return nil, spec.Errorf("params.range", "must be two finite numbers [a, b] with a < b, not %v", p.Range)
		}
	}
	if p.Retries < 0 || p.Retries > maxRetries {
		return nil, spec.Errorf("params.retries", "must be in [0, %d], not %d", maxRetries, p.Retries)
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, err
	}
	var err error
	if p.backend, err = secureagg.ParseBackend(p.Backend); err != nil {
		return nil, spec.Errorf("params.backend", "%v", err)
	}
	if p.Noise != nil && p.Noise.Mechanism == Exponential {
		if err := p.parseEM(spec); err != nil {
			return nil, err
		}
	} else if p.Noise != nil {
		if err := p.parseNoise(spec); err != nil {
			return nil, err
		}
	} else if p.Range != nil && p.rangeFinishes() {
		return nil, spec.Errorf("params.range", "is no wider than params.precision: the round that first counts the rows "+
			"would find an exact quantile before its rank could be checked and its release counted")
	}
	return p, nil
}

// rangeFinishes reports whether an exact search's round 0, which counts
// at params.range, could finish a quantile (search.mayFinish): its parties
// would refuse it (spendBeforeLast), so the spec is refused first.
func (p *Params) rangeFinishes() bool {
	s := newSearch(p.Quantiles, p.Precision, p.Range)
	for i := range s.qs {
		if s.mayFinish(i, p.Range) {
			return true
		}
	}
	return false
}

// parseNoise checks a noised search's params and fixes its rounds.
func (p *Params) parseNoise(spec *job.Spec) error {
	n := p.Noise
	if err := n.Check(spec); err != nil {
		return err
	}
	if n.Sensitivity != 0 {
		return spec.Errorf("params.noise.sensitivity", "is fixed by the job: one row moves each count by at most 1, whatever its value")
	}
	if p.Range == nil {
		return spec.Errorf("params.range", "a noised quantile needs a public range [a, b]: "+
			"the rounds, and each round's share of epsilon, are fixed by it and the precision")
	}
	if p.Precision == 0 {
		return spec.Errorf("params.precision", "must be > 0 for a noised quantile: the exact value has no fixed number of rounds")
	}
	var err error
	if p.rounds, err = noisyRounds(p.Range[0], p.Range[1], p.Precision); err != nil {
		return spec.Errorf("params.precision", "is too fine for params.range: %v", err)
	}
	if secureagg.Mechanism(n.Mechanism) == secureagg.Gaussian && n.Epsilon/float64(p.rounds) >= 1 {
		return spec.Errorf("params.noise.epsilon", "over %d rounds gives each round %v, and gaussian noise needs less than 1 per round",
			p.rounds, n.Epsilon/float64(p.rounds))
	}
	return nil
}

// searcher is the coordinator's bisection, exact (search.go) or noised
// (noisy.go): both are replayed from the committed rounds alone.
type searcher interface {
	needsTotal() bool
	thresholds() []float64
	apply(total *int64, thresholds []float64, counts []int64) error
	finished() bool
	results() []Quantile
}

// newSearcher starts the search the params ask for.
func (p *Params) newSearcher() searcher {
	if p.Noise != nil {
		return newNoisySearch(p.Quantiles, p.Range[0], p.Range[1], p.rounds)
	}
	return newSearch(p.Quantiles, p.Precision, p.Range)
}

// roundNoise is the noise of a round of slots counts under a key of
// threshold t, or nil for the exact search.
func (p *Params) roundNoise(t, slots int) *secureagg.Noise {
	if p.Noise == nil {
		return nil
	}
	return roundNoise(p.Noise.Noise(t), p.rounds, slots)
}

// pooledCounts reads a round's decrypted sum: exact counts, or noisy
// counts rounded.
func (p *Params) pooledCounts(sum []float64) ([]int64, error) {
	if p.Noise != nil {
		return toNoisyCounts(sum)
	}
	return toCounts(sum)
}

// Validate checks the params.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// args are a round's public input, committed with the step.
type args struct {
	// Total asks for the row count in slot 0 (round 0).
	Total bool `msgpack:"total"`
	// Thresholds are sorted and distinct; slot i (+1 with Total) counts
	// the values ≤ Thresholds[i].
	Thresholds []float64 `msgpack:"thresholds"`
}

func (a *args) slots() int {
	if a.Total {
		return len(a.Thresholds) + 1
	}
	return len(a.Thresholds)
}

// decision is what the coordinator commits for a round: the pooled counts
// (slot for slot as in args) with the parties that vouched for them, or
// the parties that kept the round from producing them (the round is re-run
// with the same thresholds).
type decision struct {
	Counts []int64 `msgpack:"counts"`
	// Vouched are the parties whose digest of the counts they received
	// from the root matched Counts, sorted.
	Vouched []string          `msgpack:"vouched"`
	Retry   map[string]string `msgpack:"retry"`
}

// output is a party's step output, to the coordinator alone: the
// aggregation's outcome (the pooled counts from the root, whom it missed
// from the others) with the digest of the pooled counts it received, or
// why this party cannot count its column at all.
type output struct {
	Outcome *secureagg.Outcome `msgpack:"outcome"`
	// Counts is countsDigest of the pooled counts this party received
	// (none when it received none).
	Counts   []byte `msgpack:"counts"`
	Unusable string `msgpack:"unusable"`
}

// count is the job's one round: a secure count at the round's thresholds.
var count = job.Round[args, output, decision]{Phase: "count"}

// bisection replays the search over a job's committed rounds: every party
// derives from the log the thresholds the coordinator must ask next, and
// takes part in no other round (a coordinator that asks extra or chosen
// thresholds, to read the pooled distribution where it likes, is
// refused). check, when not nil, vets each committed round's counts before
// they are replayed (a party's session: vouch.go), and its error is
// returned as it is. It returns the search and the next round's args.
func bisection(p *Params, hist []*job.Record, check func(*job.Record, *decision) error) (searcher, args, error) {
	s := p.newSearcher()
	for _, rec := range count.History(hist) {
		a, err := count.Args(rec.Step)
		if err != nil {
			return nil, args{}, err
		}
		d, err := count.Decision(rec)
		if err != nil {
			return nil, args{}, err
		}
		if d.Counts == nil {
			continue // a retry: the same thresholds again
		}
		if len(d.Counts) != a.slots() {
			return nil, args{}, fmt.Errorf("round %d committed %d counts for %d slots", rec.Step.Round, len(d.Counts), a.slots())
		}
		if check != nil {
			if err := check(rec, &d); err != nil {
				return nil, args{}, err
			}
		}
		var total *int64
		if a.Total {
			total = &d.Counts[0]
		}
		if err := s.apply(total, a.Thresholds, d.Counts[len(d.Counts)-len(a.Thresholds):]); err != nil {
			return nil, args{}, fmt.Errorf("round %d: %w", rec.Step.Round, err)
		}
	}
	return s, args{Total: s.needsTotal(), Thresholds: s.thresholds()}, nil
}

// Coordinate runs the bisection, one counting round at a time until every
// quantile is within precision, then the release step: the values are
// published only once every party's policy allowed them.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	if p.exponential() {
		return coordinateEM(ctx, c, p)
	}
	parties := c.Spec().PartyNames()
	s := p.newSearcher()
	failures, retried, counted := 0, 0, 0
	for round := 0; !s.finished(); round++ {
		a := args{Total: s.needsTotal(), Thresholds: s.thresholds()}
		call := job.Call[args]{Round: round, Parties: parties, Args: a, TimeoutMS: p.TimeoutMS}
		done, err := count.Run(ctx, c, call, func(o *job.Outcome[output]) (decision, error) {
			return decide(o, a.slots(), p)
		})
		if err != nil {
			return nil, err
		}
		d := done.Decision
		if d.Counts == nil {
			failures++
			retried++
			if failures > p.Retries {
				return nil, fmt.Errorf("quantile: round %d produced no counts %d times in a row: %s; "+
					"a quantile without these parties is a new job (its counts at these thresholds, "+
					"beside this job's, would reveal theirs)", round, failures, describe(d.Retry))
			}
			if !done.Replayed {
				if err := wait(ctx, failures); err != nil {
					return nil, err
				}
			}
			continue
		}
		failures = 0
		counted++
		if counted > maxRounds {
			return nil, fmt.Errorf("quantile: still searching after %d rounds", counted)
		}
		var total *int64
		if a.Total {
			total = &d.Counts[0]
			d.Counts = d.Counts[1:]
		}
		if err := s.apply(total, a.Thresholds, d.Counts); err != nil {
			return nil, fmt.Errorf("quantile: round %d: %w", round, err)
		}
	}
	out := job.Result{"quantiles": s.results(), "rounds": counted, "precision": p.Precision}
	switch s := s.(type) {
	case *search:
		again, err := publish(ctx, c, p, parties, s)
		if err != nil {
			return nil, err
		}
		retried += again
		out["rows"] = s.n
	case *noisySearch:
		out["noisy_rows"] = s.n
		out["noise"] = p.noiseReport()
	}
	if retried > 0 {
		out["retried_rounds"] = retried
	}
	return out, nil
}

// wait is the backoff before the n-th retry in a row: 1, 2, 4, 8, 8 … s. It
// decides nothing; the retry itself was committed.
func wait(ctx context.Context, n int) error {
	d := time.Second << min(n-1, 3)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return fmt.Errorf("quantile: waiting to retry: %w", ctx.Err())
	case <-t.C:
		return nil
	}
}

func describe(m map[string]string) string {
	parts := make([]string, 0, len(m))
	for _, n := range slices.Sorted(maps.Keys(m)) {
		parts = append(parts, n+": "+m[n])
	}
	return strings.Join(parts, "; ")
}

// decide reads a round's outputs on the coordinator: the root's pooled
// counts, or the parties to wait for before re-running the round; a party
// that cannot take part at all fails the job.
func decide(o *job.Outcome[output], slots int, p *Params) (decision, error) {
	var unusable []string
	outcomes := map[string]*secureagg.Outcome{}
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		out := o.Results[name]
		switch {
		case out.Unusable != "":
			unusable = append(unusable, out.Unusable)
		case out.Outcome == nil:
			return decision{}, fmt.Errorf("quantile: party %s sent neither an outcome nor a reason", name)
		default:
			outcomes[name] = out.Outcome
		}
	}
	if len(unusable) > 0 {
		return decision{}, fmt.Errorf("quantile: %s", strings.Join(unusable, "; "))
	}
	// A party that lost a peer in the brackets' check (mpcjob.ErrPeer)
	// is as one that did not answer: the round may run again.
	failed, silent := map[string]string{}, slices.Clone(o.Silent)
	for p, why := range o.Failed {
		if strings.Contains(why, mpcjob.ErrPeer.Error()) {
			silent = append(silent, p)
		} else {
			failed[p] = why
		}
	}
	v, err := secureagg.Fold(o.Step, outcomes, failed, silent)
	if err != nil {
		return decision{}, fmt.Errorf("quantile: %w", err)
	}
	// A result that includes every party is complete, whatever else
	// failed after it was formed (a lost report, a late share). Every
	// party that reports the digest of the counts it received must have
	// received the root's.
	if res := v.Result; res != nil && len(res.Sum) == slots {
		counts, err := p.pooledCounts(res.Sum)
		if err != nil {
			return decision{}, fmt.Errorf("quantile: %w", err)
		}
		vouched, differ := vouchers(o, counts)
		if len(differ) > 0 {
			return decision{}, fmt.Errorf("quantile: round %d: %s received other pooled counts than the root %s reported",
				o.Step.Round, strings.Join(differ, ", "), secureagg.Root(o.Step))
		}
		return decision{Counts: counts, Vouched: vouched}, nil
	}
	if len(v.Withdrew) > 0 {
		return decision{}, fmt.Errorf("quantile: %s", describe(v.Withdrew))
	}
	retry := map[string]string{}
	maps.Copy(retry, v.Missing)
	maps.Copy(retry, v.Failed)
	if len(retry) == 0 {
		retry[secureagg.Root(o.Step)] = "the root returned no counts"
	}
	return decision{Retry: retry}, nil
}

// OutputDisclosure: a party's output of a count round is the
// aggregation's outcome, the public pooled counts (the root's) or whom it
// missed, with the digest of the public counts; of the release step, that
// its policy allowed the release, which carries no data.
func (Kind) OutputDisclosure(step job.Step) wire.Disclosure {
	if step.Phase == releaseRound.Phase {
		return wire.DiscloseControl
	}
	return wire.DisclosePublicResult
}
