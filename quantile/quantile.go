// Package quantile is the secure quantile job: every party holds one
// numeric column in its own tables, and the consortium learns chosen
// quantiles of the union of all rows (the pooled column) by bisection, each
// round one secure count over threshold secure aggregation (package
// secureagg). It is the job that shows the framework carrying many
// data-dependent rounds: each round's thresholds come from the previous
// rounds' committed decisions.
//
// # Protocol
//
// The answer for q is the lower quantile y*: the smallest pooled value with
// at least k = max(1, ⌈q·N⌉) pooled values ≤ y* (q = 0 is the minimum,
// q = 1 the maximum), N the pooled row count. The coordinator keeps one
// bracket (lo, hi] per quantile with count(≤ lo) < k ≤ count(≤ hi), so
// y* ∈ (lo, hi], and every round (phase "count") halves each unfinished
// bracket:
//
//  1. The coordinator starts the round with public Args: the thresholds
//     (the split of every unfinished bracket, sorted, duplicates merged)
//     and, in round 0 only, a request for the row count.
//  2. Each party counts its own values ≤ each threshold (a binary search in
//     its column, sorted once when its session opens) and the parties sum
//     the count vector, one slot per threshold, with secureagg.Aggregate
//     (FracBits 0, ValueBits 40: up to 2^40 rows per party); the root
//     reports the pooled vector to the coordinator.
//  3. The coordinator commits the pooled counts as the round's decision,
//     and each bracket keeps the half where y* lies: hi = t when
//     count(≤ t) ≥ k, else lo = t.
//
// All quantiles bisect in parallel in one aggregation of a vector (one slot
// per quantile, a few bytes each inside one ciphertext), not one
// aggregation per quantile. The job ends when every bracket is at most
// params.precision wide, and reports for each the decimal with the fewest
// digits in (lo, hi]: y* is in there too, so |value − y*| < hi − lo ≤
// precision. A bracket closed on two adjacent floats holds y* alone, so
// precision 0 returns y* itself.
//
// # Decisions
//
// Bracket. min and max cannot be summed, and a secure max would tell every
// party the pooled extremes, so there is no bracket to find: the search
// runs over the whole float64 line, (−Inf, MaxFloat64], halving it in the
// order of float64 bit patterns (see split). Within one binade that order
// is linear in value; across binades the split halves the exponent range,
// so the first rounds find the sign and order of magnitude of y* (about 11
// rounds, fewer with a known range) and each further round adds one
// bit. Values within precision/2 of 0 count as one point, so the search
// does not walk down to 2^-1000. Rounds: about 12 + log2(|y*|/precision)
// for the quantile that needs most (round 0, which also counts N,
// included), at most 64 (the bits of the key; 65 with params.range);
// precision 0 runs until the bracket closes on two adjacent floats, 64
// rounds, and returns y* exactly.
// docs/quantile.md has the measured rounds. The price of no bracket is
// those rounds, and the pooled counts they reveal (one per quantile per
// round), not any party's extremes. A consortium that knows a range [a, b]
// likely to hold the quantiles may give it (params.range): round 0 then
// counts at a and b, every bracket starts as (−Inf, a], (a, b] or
// (b, MaxFloat64], whichever holds y*, and the search skips most of the
// order-of-magnitude rounds (23 → 17 for a median near 50 in [0, 100] at
// precision 0.01). A wrong range costs rounds, never the answer; the range
// is public and the pooled counts at a and b are revealed like any other.
//
// Precision. params.precision is absolute, in the column's units, default
// 0.01; 0 asks for the exact value. A relative
// default would need the scale of the data, which is what is being
// protected.
//
// Exactness. The thresholds are chosen in integer key space and the widths
// compared exactly (math/big), so every leader on every architecture
// derives the same thresholds from the same committed decisions, and the
// answer is a deterministic function of the pooled column: a job resumed
// after failover gives the same value to the bit. k is computed exactly from
// the shortest decimal of q (0.1 of 10 rows is the 1st value).
//
// # Leakage profile
//
// A party sends only what secureagg sends (ciphertexts of its count vector
// or its subtree's product, the encrypted total down the tree, a decryption
// share with its proof, and the public result), and reports to the
// coordinator only the aggregation's outcome. Every party learns N and, in
// each round, the pooled counts at that round's thresholds: those counts are
// the round's committed decision, in the log every member reads. Nothing
// else: no party, the coordinator included, learns another party's values,
// row count or counts. The pooled counts tell every member the pooled
// column's empirical distribution function at about 12 + log2(|y*|/precision)
// points per quantile, concentrated around the quantile (more with
// precision 0); the answer itself is a pooled statistic within precision of
// a pooled value (q = 0 and 1 reveal the pooled extremes, by definition). A
// party alone in a range learns the others' counts there only from the
// pooled counts minus its own, as with any pooled statistic. TestLeakage
// checks one party's outgoing messages and step outputs against this, and
// that every committed decision is exactly the pooled counts.
//
// params.backend (auto, paillier or lattice) picks secureagg's
// cryptosystem; with auto the count vectors, shorter than
// secureagg.LatticeFrom, stay on Paillier. On the lattice backend the
// decryption shares carry no proof (a wrong one is found by comparing
// quorums), and the total is checked by sketches (a random key from each
// party to each child of the root, that child's sketch of its subtree's
// sum back: secureagg's package doc); the profile above holds otherwise.
//
// The search is that of Aggarwal, Mishra and Pinkas's multi-party k-th
// ranked element protocol (EUROCRYPT 2004), which reveals only whether each
// pooled count reaches k; revealing no more than that bit needs a
// comparison under encryption that secureagg does not offer, so here the
// pooled counts themselves are public.
//
// # Faults
//
// A round that produces no pooled counts (a party silent, unreachable or
// named missing by secureagg, a corrupted aggregation, too few decryption
// shares) is re-run with the same thresholds and all parties as the next
// round number, after a wait of 1, 2, 4, 8, 8 … s, up to params.retries
// (default 5) consecutive times; a node that restarts in that window
// reopens its session from its own tables (the session holds nothing else)
// and the job finishes with the same answer. The same thresholds over the
// same parties reveal the same pooled counts, so a retry discloses nothing
// new. When the party is still missing after the retries, the job fails
// naming it. It is not re-run without the party, unlike sum: the pooled
// counts at the same thresholds with and without it would give every member
// the dropped party's own counts (and row count) by subtraction. Leaving it
// out is a new job someone submits knowing that. A party whose column
// cannot be read (no table with the column, a non-numeric column) withdraws
// at once and fails the job, naming it: a retry would not change its
// tables. A decryption share that fails verification is excluded as in
// secureagg; the counts are still right.
//
// A coordinator that dies mid-job is replaced by the next Raft leader,
// which replays Coordinate from the committed decisions and re-runs the
// unfinished round as a new attempt; the brackets, and so the answer, are
// the same. A coordinator that is also a party and stays down is a party
// that stays down: the job fails after the retries.
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
	"github.com/cohortdm/cohort/protocol"
	"github.com/cohortdm/cohort/secureagg"
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
	// Quantiles are the q in [0, 1] to find, distinct (default [0.5]).
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

	backend secureagg.Backend
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
	return p, nil
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
// (slot for slot as in args), or the parties that kept the round from
// producing them (the round is re-run with the same thresholds).
type decision struct {
	Counts []int64           `msgpack:"counts"`
	Retry  map[string]string `msgpack:"retry"`
}

// output is a party's step output, to the coordinator alone: the
// aggregation's outcome (the pooled counts from the root, whom it missed
// from the others), or why this party cannot count its column at all.
type output struct {
	Outcome  *secureagg.Outcome `msgpack:"outcome"`
	Unusable string             `msgpack:"unusable"`
}

// count is the job's one round: a secure count at the round's thresholds.
var count = job.Round[args, output, decision]{Phase: "count"}

// bisection replays the search over a job's committed rounds: every party
// derives from the log the thresholds the coordinator must ask next, and
// takes part in no other round (a coordinator that asks extra or chosen
// thresholds, to read the pooled distribution where it likes, is
// refused). It returns the search and the next round's args.
func bisection(p *Params, hist []*job.Record) (*search, args, error) {
	s := newSearch(p.Quantiles, p.Precision, p.Range)
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
		var total *int64
		if a.Total {
			total = &d.Counts[0]
		}
		if err := s.apply(total, a.Thresholds, d.Counts[len(d.Counts)-len(a.Thresholds):]); err != nil {
			return nil, args{}, fmt.Errorf("round %d: %w", rec.Step.Round, err)
		}
	}
	return s, args{Total: !s.counted, Thresholds: s.thresholds()}, nil
}

// Coordinate runs the bisection: one counting round at a time until every
// quantile is within precision.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	p, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	s := newSearch(p.Quantiles, p.Precision, p.Range)
	failures, retried, counted := 0, 0, 0
	for round := 0; !s.finished(); round++ {
		a := args{Total: !s.counted, Thresholds: s.thresholds()}
		call := job.Call[args]{Round: round, Parties: parties, Args: a, TimeoutMS: p.TimeoutMS}
		done, err := count.Run(ctx, c, call, func(o *job.Outcome[output]) (decision, error) {
			return decide(o, a.slots())
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
	out := job.Result{"quantiles": s.results(), "rows": s.n, "rounds": counted, "precision": p.Precision}
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
func decide(o *job.Outcome[output], slots int) (decision, error) {
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
	v, err := secureagg.Fold(o.Step, outcomes, o.Failed, o.Silent)
	if err != nil {
		return decision{}, fmt.Errorf("quantile: %w", err)
	}
	// A result that includes every party is complete, whatever else
	// failed after it was formed (a lost report, a late share).
	if res := v.Result; res != nil && len(res.Sum) == slots {
		counts := make([]int64, slots)
		for i, v := range res.Sum {
			if v != math.Trunc(v) || v < 0 || v > 1<<53 {
				return decision{}, fmt.Errorf("quantile: a pooled count is not a count")
			}
			counts[i] = int64(v)
		}
		return decision{Counts: counts}, nil
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

// OutputDisclosure: a party's output is the aggregation's outcome, the
// public pooled counts (the root's) or whom it missed.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }
