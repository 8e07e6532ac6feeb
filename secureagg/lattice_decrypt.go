package secureagg

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// Decryption on the lattice backend. A decryption share has no cheap
// validity proof, so the root compares the decryptions of several quorums
// (lattice.Plan, lattice.Verdict) instead of verifying proofs:
//
//   - Seq 0, the plan every party derives from the step: lattice.PlanVerified
//     over every party (quorums that no single member is in all of, so a
//     single wrong share is always detected), or lattice.PlanSingle when the
//     parties are exactly a quorum (nothing is then detected beyond the
//     range checks). Every party sends its shares at once.
//   - Seq 1: when some shares did not come (late, lost, malformed), the
//     root names those parties in Result.Excluded and asks the others for
//     the plan over the parties left (a share request naming them).
//   - Seq 2: when the quorums disagree and the verdict names nobody, the
//     root asks for lattice.PlanBlame over the same parties; its verdict names
//     the party whose shares were wrong (Result.Excluded), or, if it
//     cannot (three parties, or more than one faulty), the aggregation
//     fails naming the suspects.
//
// Every share of plan Seq for quorum q travels on the step's sub-channel
// "share/Seq/q", so shares of different plans never answer each other.

// plan is the plan over the available points: the blame plan, or the
// verified one, or a single quorum when only a quorum is available.
func (s *latticeAgg) plan(available []int, blame bool) (*lattice.Plan, error) {
	switch {
	case blame:
		return lattice.PlanBlame(s.keys.PublicKey, available)
	case len(available) > s.keys.Quorum:
		return lattice.PlanVerified(s.keys.PublicKey, available)
	}
	return lattice.PlanSingle(s.keys.PublicKey, available)
}

// shareNet is the channel of the shares of one quorum of plan seq.
func shareNet(net Network, seq, quorum int) Network {
	return net.Sub("share/" + strconv.Itoa(seq) + "/" + strconv.Itoa(quorum))
}

// openTotal is the root's part: collect the shares of the plans above,
// open, judge and decode. Failures become a result with Error set, so they
// travel down the tree.
func (s *latticeAgg) openTotal(ctx context.Context, total *lattice.Aggregate, target *lattice.Target) *latticeResult {
	fail := func(err error) *latticeResult { return &latticeResult{Error: truncate(err.Error()), err: err} }
	excluded := map[string]string{}
	available := s.pointsOf(s.parties)
	plan, err := s.plan(available, false)
	if err != nil {
		return fail(err)
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { s.announce(ctx, true) }) // as the root's own shares are made (formed.go)
	op, err := s.collect(ctx, total, target, plan, 0, excluded)
	if err == nil && len(op.Pending()) > 0 {
		available = slices.DeleteFunc(available, func(p int) bool { _, gone := excluded[s.nameOf(p)]; return gone })
		op, err = s.replan(ctx, total, target, available, 1, excluded)
	}
	if err != nil {
		return fail(err)
	}
	res, err := op.Open()
	if errors.Is(err, lattice.ErrDisagree) && len(available) > s.keys.Quorum {
		if op, err = s.replan(ctx, total, target, available, 2, excluded); err != nil {
			return fail(err)
		}
		res, err = op.Open()
	}
	switch {
	case errors.Is(err, lattice.ErrDisagree):
		return fail(fmt.Errorf("%w: the quorums' decryptions disagree and no single party can be named; one of %s made wrong decryption shares",
			ErrTooFewShares, strings.Join(s.names(res.Verdict.Suspects), ", ")))
	case errors.Is(err, lattice.ErrRange):
		return fail(fmt.Errorf("%w: the decrypted sum: %w", ErrRange, err))
	case err != nil:
		return fail(err)
	}
	for _, name := range s.names(res.Verdict.Faulty) {
		excluded[name] = "wrong decryption share: the quorums without it agree, those with it do not"
	}
	out := &latticeResult{Included: s.parties, Excluded: excluded, Noise: s.noise, plain: res.Plain}
	if len(excluded) == 0 {
		out.Excluded = nil
	}
	return out
}

// replan asks the available parties for the shares of plan seq (1: after
// missing shares, 2: blame) and collects them.
func (s *latticeAgg) replan(ctx context.Context, total *lattice.Aggregate, target *lattice.Target, available []int, seq int, excluded map[string]string) (*lattice.Opening, error) {
	if len(available) < s.keys.Quorum {
		return nil, fmt.Errorf("%w: %d of %d needed; excluded %s", ErrTooFewShares, len(available), s.keys.Quorum,
			strings.Join(slices.Sorted(maps.Keys(excluded)), ", "))
	}
	plan, err := s.plan(available, seq == 2)
	if err != nil {
		return nil, err
	}
	req := latticeRequest{Seq: seq, Blame: seq == 2, Available: s.names(available)}
	s.sendAll(ctx, func(string) int { return s.shareDeadline(seq) }, s.members(plan), TypeShareRequest, req, wire.DiscloseControl)
	op, err := s.collect(ctx, total, target, plan, seq, excluded)
	if err == nil && len(op.Pending()) > 0 {
		err = fmt.Errorf("%w: shares of the re-planned decryption missing; excluded %s", ErrTooFewShares,
			strings.Join(slices.Sorted(maps.Keys(excluded)), ", "))
	}
	return op, err
}

// collect opens total under plan: the root's own shares, then every other
// member's, each by the plan's deadline. A member whose share is late or
// malformed is named in excluded; its quorums stay pending.
func (s *latticeAgg) collect(ctx context.Context, total *lattice.Aggregate, target *lattice.Target, plan *lattice.Plan, seq int, excluded map[string]string) (*lattice.Opening, error) {
	op, err := lattice.NewOpening(s.keys.PublicKey, s.layout, plan, total)
	if err != nil {
		return nil, err
	}
	for _, q := range plan.QuorumsOf(s.keys.Self) {
		sh, err := s.dec.GenShare(target, plan, q)
		if err != nil {
			return nil, fmt.Errorf("secureagg: decryption share: %w", err)
		}
		if err := op.Add(sh); err != nil {
			return nil, fmt.Errorf("secureagg: decryption share: %w", err)
		}
	}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, p := range s.members(plan) {
		wg.Go(func() {
			why := s.receiveShares(ctx, op, &mu, p, plan, seq)
			if why != "" {
				mu.Lock()
				excluded[p] = why
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("secureagg: %w", err)
	}
	return op, nil
}

// receiveShares receives and adds party p's shares of plan seq, returning
// why it is excluded, or "".
func (s *latticeAgg) receiveShares(ctx context.Context, op *lattice.Opening, mu *sync.Mutex, p string, plan *lattice.Plan, seq int) string {
	point := s.points[p]
	for _, q := range plan.QuorumsOf(point) {
		data, _, err := s.receiveBlob(ctx, s.shareDeadline(seq), p, TypeShare, shareNet(s.net, seq, q), s.maxShare())
		if err != nil {
			if ctx.Err() == nil && errors.Is(err, wire.ErrMalformed) {
				return "malformed decryption share: " + truncate(err.Error())
			}
			return "no decryption share in time"
		}
		sh := op.AllocateShare()
		if err := sh.UnmarshalBinary(data); err != nil {
			return "malformed decryption share: " + truncate(err.Error())
		}
		if !slices.Equal(sh.Parties, []int{point}) || sh.Quorum != q {
			return "malformed decryption share: it claims another party or quorum"
		}
		mu.Lock()
		err = op.Add(sh)
		mu.Unlock()
		if err != nil {
			return "decryption share of another aggregate: " + truncate(err.Error())
		}
	}
	return ""
}

// members lists the parties in plan's quorums other than this party,
// sorted.
func (s *latticeAgg) members(plan *lattice.Plan) []string {
	var out []string
	for _, q := range plan.Quorums {
		for _, p := range q {
			if name := s.nameOf(p); name != s.self && !slices.Contains(out, name) {
				out = append(out, name)
			}
		}
	}
	slices.Sort(out)
	return out
}

func (s *latticeAgg) names(points []int) []string {
	out := make([]string, len(points))
	for i, p := range points {
		out[i] = s.nameOf(p)
	}
	return out
}

// share is a non-root party's part of the decryption once it holds the
// target: every party learns from this party that it makes shares
// (formed.go), on ctx, which the result's arrival does not cut short; its
// shares of the plan every party derives leave once the notices are
// delivered (or given up at their deadline), then it serves the root's
// requests for other plans until shareCtx ends (the result arrived). A
// share the root does not get is the root's to report (it excludes us).
func (s *latticeAgg) share(ctx, shareCtx context.Context, total latticeTotal) {
	var wg sync.WaitGroup
	defer wg.Wait()
	noticed := make(chan struct{})
	wg.Go(func() { defer close(noticed); s.announce(ctx, true) })
	s.serveShares(shareCtx, total.target, noticed)
}

// serveShares sends this party's shares of the first plan, once noticed
// is closed, then of each plan the root asks for (at most maxRequests),
// until ctx ends.
func (s *latticeAgg) serveShares(ctx context.Context, target *lattice.Target, noticed <-chan struct{}) {
	plan, err := s.plan(s.pointsOf(s.parties), false)
	if err != nil {
		return
	}
	select {
	case <-noticed:
	case <-ctx.Done():
		return
	}
	if s.sendShares(ctx, target, plan, 0) != nil {
		return
	}
	root := s.tree.root()
	for last := 0; last < maxRequests; {
		msg, err := s.receive(ctx, s.totalHops(), root, TypeShareRequest)
		if err != nil {
			return
		}
		req, err := decodeLatticeRequest(msg, last, s.keys.Quorum, s.parties)
		if err != nil {
			return // the root's shares stay missing: it fails, not this party
		}
		last = req.Seq
		if plan, err = s.plan(s.pointsOf(req.Available), req.Blame); err != nil {
			return
		}
		if s.sendShares(ctx, target, plan, req.Seq) != nil {
			return
		}
	}
}

// sendShares makes and sends this party's share for each quorum of plan
// it is in.
func (s *latticeAgg) sendShares(ctx context.Context, target *lattice.Target, plan *lattice.Plan, seq int) error {
	root := s.tree.root()
	for _, q := range plan.QuorumsOf(s.keys.Self) {
		sh, err := s.dec.GenShare(target, plan, q)
		if err != nil {
			return err
		}
		b, err := sh.MarshalBinary()
		if err != nil {
			return err
		}
		if err := s.sendBlob(ctx, s.shareDeadline(seq), root, TypeShare, shareNet(s.net, seq, q), b, wire.DiscloseDecryptionShare); err != nil {
			return err
		}
	}
	return nil
}

// open is the root's part of the decryption: the result message for its
// children and its own outcome.
func (s *latticeAgg) open(ctx context.Context, total latticeTotal) (frames, *Result, error) {
	res := s.openTotal(ctx, total.agg, total.target)
	data, err := encodeResult(res)
	if err != nil {
		return nil, nil, err
	}
	f, err := splitBlob(s.shape, data, s.partSize)
	if err != nil {
		return nil, nil, err
	}
	if res.Error != "" {
		return f, nil, res.err
	}
	out, err := s.outcome(res)
	return f, out, err
}

// result decodes the result from the parent: the message to pass down (as
// it came) and this party's outcome; nil frames and an error for a
// malformed result.
func (s *latticeAgg) result(data []byte, _ []string) (frames, *Result, error) {
	res, err := decodeLatticeResult(data, s.coeffs(), s.keys.Params.PlaintextModulus(), s.parties)
	if err != nil {
		return nil, nil, err
	}
	f, err := splitBlob(s.shape, data, s.partSize)
	if err != nil {
		return nil, nil, err
	}
	switch {
	case len(res.Missing) > 0:
		return f, nil, &MissingError{Parties: res.Missing, Formed: true}
	case res.Error != "":
		return f, nil, fmt.Errorf("%w: %s", ErrRoot, res.Error)
	}
	out, err := s.outcome(res)
	return f, out, err
}

// resultMissing is the verdict a party passes down when its parent never
// passed a result.
func (s *latticeAgg) resultMissing(missing []string) (frames, error) {
	data, err := encodeResult(&latticeResult{Missing: missing})
	if err != nil {
		return nil, err
	}
	return splitBlob(s.shape, data, s.partSize)
}

// outcome decodes and range-checks a result's sum.
func (s *latticeAgg) outcome(res *latticeResult) (*Result, error) {
	totals, err := s.layout.Decode(res.plain, len(s.parties))
	if err != nil {
		return nil, fmt.Errorf("%w: the root's result: %w: %w", ErrRoot, ErrRange, err)
	}
	sum := totals.Float64s()
	for i, v := range sum {
		if math.IsInf(v, 0) || math.IsNaN(v) {
			return nil, fmt.Errorf("%w: decrypted sum[%d] is not a finite float", ErrRange, i)
		}
	}
	return &Result{Sum: sum, Included: res.Included, Excluded: res.Excluded, Noise: res.Noise}, nil
}
