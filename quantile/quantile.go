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
// 0.01 (DESIGN.md's example); 0 asks for the exact value. A relative
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
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
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

const phase = "count"

const (
	// maxQuantiles bounds params.quantiles: each is one slot per round.
	maxQuantiles = 100
	// maxTimeout bounds params.timeout_ms: a day.
	maxTimeout = 24 * time.Hour
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
	if p.TimeoutMS < 0 || p.TimeoutMS > maxTimeout.Milliseconds() {
		return nil, spec.Errorf("params.timeout_ms", "must be in [1, %d] (a day), not %d", maxTimeout.Milliseconds(), p.TimeoutMS)
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

func decodeArgs(b []byte) (*args, error) {
	var a args
	if err := protocol.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("quantile: round args: %w", err)
	}
	for i, t := range a.Thresholds {
		if math.IsNaN(t) || (i > 0 && orderKey(t) <= orderKey(a.Thresholds[i-1])) {
			return nil, fmt.Errorf("quantile: round args: %w: thresholds not sorted and distinct", protocol.ErrMalformed)
		}
	}
	if a.slots() == 0 {
		return nil, fmt.Errorf("quantile: round args: %w: nothing to count", protocol.ErrMalformed)
	}
	return &a, nil
}

// decision is what the coordinator commits for a round: the pooled counts
// (slot for slot as in args), or the parties that kept the round from
// producing them (the round is re-run), or why the job fails.
type decision struct {
	Counts []int64           `msgpack:"counts"`
	Retry  map[string]string `msgpack:"retry"`
	Error  string            `msgpack:"error"`
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
		b, err := protocol.Marshal(&a)
		if err != nil {
			return nil, fmt.Errorf("quantile: round %d args: %w", round, err)
		}
		step := job.Step{Phase: phase, Round: round, Parties: parties, Args: b, TimeoutMS: p.TimeoutMS}
		d, replayed, err := run(ctx, c, step, func(outs *job.Outputs) decision {
			return decide(outs, parties, a.slots())
		})
		if err != nil {
			return nil, err
		}
		switch {
		case d.Error != "":
			return nil, errors.New(d.Error)
		case d.Counts == nil:
			failures++
			retried++
			if failures > p.Retries {
				return nil, fmt.Errorf("quantile: round %d produced no counts %d times in a row: %s; "+
					"a quantile without these parties is a new job (its counts at these thresholds, "+
					"beside this job's, would reveal theirs)", round, failures, describe(d.Retry))
			}
			if !replayed {
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

// run is job.Run that also says whether the step was answered from the
// log, so that a replay does not wait out the backoff of a retry again.
func run(ctx context.Context, c job.Coordinator, step job.Step, decide func(*job.Outputs) decision) (decision, bool, error) {
	var d decision
	a, err := c.Start(ctx, step)
	if err != nil {
		return d, false, err
	}
	if rec := a.Record(); rec != nil {
		if err := protocol.Unmarshal(rec.Decision, &d); err != nil {
			return d, true, fmt.Errorf("quantile: round %d: committed decision: %w", step.Round, err)
		}
		return d, true, nil
	}
	outs, err := a.Wait(ctx)
	if err != nil {
		return d, false, err
	}
	d = decide(outs)
	b, err := protocol.Marshal(&d)
	if err != nil {
		return d, false, fmt.Errorf("quantile: round %d: encode decision: %w", step.Round, err)
	}
	if _, err := a.Commit(ctx, outs, b, ""); err != nil {
		return d, false, err
	}
	return d, false, nil
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
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + ": " + m[n]
	}
	return strings.Join(parts, "; ")
}

// decide reads a round's outputs on the coordinator: the root's pooled
// counts, or the parties to wait for before re-running the round, or a
// party that cannot take part at all.
func decide(outs *job.Outputs, parties []string, slots int) decision {
	root := secureagg.Root(job.Step{Parties: parties, Coordinator: outs.Coordinator})
	retry := map[string]string{}
	for _, name := range outs.Silent {
		retry[name] = "did not answer"
	}
	for name, why := range outs.Failed {
		if _, ok := retry[name]; !ok {
			retry[name] = why
		}
	}
	var unusable []string
	var res *secureagg.Result
	for _, name := range parties {
		b, ok := outs.Results[name]
		if !ok {
			continue
		}
		o, err := decodeOutput(b)
		if err != nil {
			return decision{Error: fmt.Sprintf("quantile: output of %s: %v", name, err)}
		}
		if o.Unusable != "" {
			unusable = append(unusable, o.Unusable)
			continue
		}
		r, err := secureagg.DecodeOutcome(o.Report)
		var miss *secureagg.MissingError
		switch {
		case errors.As(err, &miss):
			for _, m := range miss.Parties {
				if _, ok := retry[m]; !ok {
					retry[m] = "its input did not reach the root"
				}
			}
		case err != nil:
			return decision{Error: fmt.Sprintf("quantile: outcome of %s: %v", name, err)}
		case name == root:
			res = r
		}
	}
	if len(unusable) > 0 {
		return decision{Error: "quantile: " + strings.Join(unusable, "; ")}
	}
	// A result that includes every party is complete, whatever else
	// failed after it was formed (a lost report, a late share).
	if res != nil && len(res.Sum) == slots && slices.Equal(res.Included, parties) {
		counts := make([]int64, slots)
		for i, v := range res.Sum {
			if v != math.Trunc(v) || v < 0 || v > 1<<53 {
				return decision{Error: fmt.Sprintf("quantile: pooled count %v is not a count", v)}
			}
			counts[i] = int64(v)
		}
		return decision{Counts: counts}
	}
	if len(retry) == 0 {
		retry[root] = "the root returned no counts"
	}
	return decision{Retry: retry}
}

// OutputDisclosure: a party's output is the aggregation's outcome, the
// public pooled counts (the root's) or whom it missed.
func (Kind) OutputDisclosure(job.Step) protocol.Disclosure { return protocol.DisclosePublicResult }
