package secureagg

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// The lattice backend's share exchange, without I/O (lattice_decrypt.go
// has the plans): the root's rounds (latticeOpening) and a decryptor's
// (latticeSharing), which the schedule's exchange carries.

// latticeOpening is the root's side: the shares of the plan every party
// derives (seq 0), then, when shares did not come, the plan over the
// parties left (seq 1), and when the quorums disagree, the blame plan
// (seq 2).
type latticeOpening struct {
	s         *latticeAgg
	total     latticeTotal
	available []int // the points whose shares are still asked for
	plan      *lattice.Plan
	op        *lattice.Opening
	mine      []*lattice.DecryptionShare // the root's own shares of plan
	opened    *lattice.Result
	openErr   error
}

var _ totalOpener = (*latticeOpening)(nil)

// opening is the root's side of the decryption of the total.
func (s *latticeAgg) opening(total latticeTotal) totalOpener {
	return &latticeOpening{s: s, total: total, available: s.pointsOf(s.parties)}
}

// first plans seq 0, whose shares every party sends unasked.
func (o *latticeOpening) first() (*shareRound, error) { return o.round(0) }

// round plans seq over the available parties: the parties asked, with a
// request naming those parties after seq 0.
func (o *latticeOpening) round(seq int) (*shareRound, error) {
	s := o.s
	var err error
	if o.plan, err = s.plan(o.available, seq == 2); err != nil {
		return nil, err
	}
	if o.op, err = lattice.NewOpening(s.keys.PublicKey, s.layout, o.plan, o.total.agg); err != nil {
		return nil, err
	}
	o.mine = nil
	r := &shareRound{seq: seq, asked: s.members(o.plan), due: s.at(s.shareDeadline(seq))}
	if seq > 0 {
		req := latticeRequest{Seq: seq, Blame: seq == 2, Available: s.names(o.available)}
		if r.request, err = wire.Marshal(req); err != nil {
			return nil, fmt.Errorf("secureagg: marshal the share request: %w", err)
		}
		r.disclosure = wire.DiscloseControl
	}
	return r, nil
}

// own makes the root's shares of the round's plan.
func (o *latticeOpening) own(*shareRound) error {
	for _, q := range o.plan.QuorumsOf(o.s.keys.Self) {
		sh, err := o.s.dec.GenShare(o.total.target, o.plan, q)
		if err != nil {
			return err
		}
		o.mine = append(o.mine, sh)
	}
	return nil
}

// slots: one share per quorum of the plan p is in, each a blob on its
// quorum's sub-channel.
func (o *latticeOpening) slots(r *shareRound, p string) []inShare {
	s := o.s
	var out []inShare
	for _, q := range o.plan.QuorumsOf(s.points[p]) {
		out = append(out, inShare{sub: shareChannel(r.seq, q), r: newBlobReader(s.shape, s.maxShare(), s.partSize, s.parties)})
	}
	return out
}

// check leaves p's share for its i-th quorum to its add, which folds it
// into the opening of the total straight from data (AddBinary: no share
// is decoded apart from the quorum's accumulator, and a share refused
// changes nothing). The share must claim p and that quorum.
func (o *latticeOpening) check(_ *shareRound, p string, i int, data []byte) (func() string, string) {
	point := o.s.points[p]
	q := o.plan.QuorumsOf(point)[i]
	errClaim := errors.New("it claims another party or quorum")
	accept := func(quorum int, parties []int) error {
		if !slices.Equal(parties, []int{point}) || quorum != q {
			return errClaim
		}
		return nil
	}
	return func() string {
		err := o.op.AddBinary(data, accept)
		switch {
		case err == nil:
			return ""
		case errors.Is(err, errClaim), errors.Is(err, lattice.ErrMalformed):
			return "malformed decryption share: " + truncate(err.Error())
		default:
			return "decryption share of another aggregate: " + truncate(err.Error())
		}
	}, ""
}

// next adds the root's own shares and, when shares of seq 0 are missing,
// re-plans over the parties left; else it opens the total, and asks for
// the blame plan when the quorums disagree and more than a quorum is
// available.
func (o *latticeOpening) next(r *shareRound, excluded map[string]string) (*shareRound, error) {
	s := o.s
	for _, sh := range o.mine {
		if err := o.op.Add(sh); err != nil {
			return nil, fmt.Errorf("secureagg: decryption share: %w", err)
		}
	}
	if len(o.op.Pending()) > 0 {
		if r.seq > 0 {
			return nil, fmt.Errorf("%w: shares of the re-planned decryption missing; excluded %s", ErrTooFewShares,
				strings.Join(slices.Sorted(maps.Keys(excluded)), ", "))
		}
		o.available = slices.DeleteFunc(o.available, func(p int) bool { _, gone := excluded[s.nameOf(p)]; return gone })
		return o.replan(1, excluded)
	}
	o.opened, o.openErr = o.op.Open()
	if errors.Is(o.openErr, lattice.ErrDisagree) && r.seq < 2 && len(o.available) > s.keys.Quorum {
		return o.replan(2, excluded)
	}
	return nil, nil
}

// replan plans seq (1: after missing shares, 2: blame) over the parties
// available, which must be a quorum at least.
func (o *latticeOpening) replan(seq int, excluded map[string]string) (*shareRound, error) {
	if len(o.available) < o.s.keys.Quorum {
		return nil, fmt.Errorf("%w: %d of %d needed; excluded %s", ErrTooFewShares, len(o.available), o.s.keys.Quorum,
			strings.Join(slices.Sorted(maps.Keys(excluded)), ", "))
	}
	return o.round(seq)
}

// result judges the opening and decodes the sum: the result message for
// the root's children and its own outcome. Failures become a result with
// Error set, so they travel down the tree; the maker of a wrong share the
// verdict names is excluded.
func (o *latticeOpening) result(excluded map[string]string, err error) (frames, *Result, error) {
	s := o.s
	res := o.judge(excluded, err)
	f, err := marshalBlob(s.shape, resultBlob{res}, s.partSize)
	if err != nil {
		return nil, nil, err
	}
	if res.Error != "" {
		return f, nil, res.err
	}
	out, err := s.outcome(res)
	return f, out, err
}

// judge is the result of the exchange that ended with err.
func (o *latticeOpening) judge(excluded map[string]string, err error) *latticeResult {
	s := o.s
	fail := func(err error) *latticeResult { return &latticeResult{Error: truncate(err.Error()), err: err} }
	if err == nil {
		err = o.openErr
	}
	switch {
	case errors.Is(err, lattice.ErrDisagree) && o.opened != nil:
		return fail(fmt.Errorf("%w: the quorums' decryptions disagree and no single party can be named; one of %s made wrong decryption shares",
			ErrTooFewShares, strings.Join(s.names(o.opened.Verdict.Suspects), ", ")))
	case errors.Is(err, lattice.ErrRange):
		return fail(fmt.Errorf("%w: the decrypted sum: %w", ErrRange, err))
	case err != nil:
		return fail(err)
	}
	for _, name := range s.names(o.opened.Verdict.Faulty) {
		excluded[name] = "wrong decryption share: the quorums without it agree, those with it do not"
	}
	out := &latticeResult{Included: s.parties, Excluded: excluded, Noise: s.noise, plain: o.opened.Plain}
	if len(excluded) == 0 {
		out.Excluded = nil
	}
	return out
}

// latticeSharing is a decryptor's side: its shares of the plan every
// party derives, unasked, then of each plan the root asks for (at most
// maxRequests).
type latticeSharing struct {
	s      *latticeAgg
	target *lattice.Target
	seq    int
	plan   *lattice.Plan
}

var _ sharer = (*latticeSharing)(nil)

// sharing is a non-root party's side of the decryption of the target it
// checked.
func (s *latticeAgg) sharing(total latticeTotal) (sharer, error) {
	plan, err := s.plan(s.pointsOf(s.parties), false)
	if err != nil {
		return nil, err
	}
	return &latticeSharing{s: s, target: total.target, plan: plan}, nil
}

func (l *latticeSharing) unasked() bool        { return true }
func (l *latticeSharing) waitUntil() time.Time { return l.s.at(l.s.totalHops()) }
func (l *latticeSharing) more() bool           { return l.seq < maxRequests }

// answer decodes the root's request for plan seq over the parties it
// names (a later plan, over a quorum of the step's parties at least).
func (l *latticeSharing) answer(msg []byte) (bool, error) {
	s := l.s
	req, err := decodeLatticeRequest(msg, l.seq, s.keys.Quorum, s.parties)
	if err != nil {
		return false, err // the root's shares stay missing: it fails, not this party
	}
	plan, err := s.plan(s.pointsOf(req.Available), req.Blame)
	if err != nil {
		return false, err
	}
	l.seq, l.plan = req.Seq, plan
	return true, nil
}

// shares makes this party's share for each quorum of the plan it is in.
func (l *latticeSharing) shares() ([]outShare, time.Time, error) {
	s := l.s
	var out []outShare
	for _, q := range l.plan.QuorumsOf(s.keys.Self) {
		f, err := marshalBlob(s.shape, shareBlob{dec: s.dec, t: l.target, plan: l.plan, q: q}, s.partSize)
		if err != nil {
			return nil, time.Time{}, err
		}
		out = append(out, outShare{sub: shareChannel(l.seq, q), f: f})
	}
	return out, s.at(s.shareDeadline(l.seq)), nil
}

// shareBlob is a decryption share made as it is encoded
// (lattice.Decryptor.AppendShare), a blob marshalBlob builds in place: a
// decryptor that sends its share never holds it apart from the message.
type shareBlob struct {
	dec  *lattice.Decryptor
	t    *lattice.Target
	plan *lattice.Plan
	q    int
}

// AppendBinary appends the share's encoding to b.
func (sb shareBlob) AppendBinary(b []byte) ([]byte, error) {
	return sb.dec.AppendShare(b, sb.t, sb.plan, sb.q)
}
