package hamming

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/hamdist"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: hamming`.
type Kind struct{}

// distanceRound is the job's one step: the two parties align their ids
// and run the exchange; the key holder's output is how many ids meet.
var distanceRound = job.Round[distanceArgs, distanceOutput, distanceDecision]{Phase: "distance"}

// distanceArgs carries nothing: the spec fixes the comparison.
type distanceArgs struct{}

// distanceOutput is one party's output: how many ids it compared, and,
// from the key holder, how many of them meet (within the threshold).
type distanceOutput struct {
	Holder   bool `msgpack:"holder"`
	Compared int  `msgpack:"compared"`
	Matches  int  `msgpack:"matches"`
}

// distanceDecision is the public result.
type distanceDecision struct {
	Compared int `msgpack:"compared"`
	Distance int `msgpack:"distance"`
}

// Validate checks the spec (parse), naming the bad field.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parse(spec)
	return err
}

// OutputDisclosure: the outputs are the public result's two numbers.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Uses declares what a party's data discloses: its id column into the
// alignment's PSI (with align psi), to its peer; its compared column as
// distance, whose count every member learns.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	cfg, err := parse(spec)
	if err != nil {
		return nil, err
	}
	me, peer, ok := cfg.side(party)
	if !ok {
		return nil, nil
	}
	s := cfg.sides[me]
	var out []job.Use
	if cfg.p.Align == hamdist.AlignPSI {
		out = append(out, job.Use{Table: s.Table, Column: s.ID, Role: job.RoleID, Form: wire.DisclosePSIBlinded, To: []string{cfg.sides[peer].Party}})
	}
	role := job.RoleAttribute
	if len(s.Columns[table.Class]) > 0 {
		role = job.RoleClass
	}
	return append(out, job.Use{Table: s.Table, Column: cfg.columns[me], Role: role, Form: wire.DiscloseDistance}), nil
}

// Coordinate runs the distance step and commits the distance.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	cfg, err := parse(c.Spec())
	if err != nil {
		return nil, err
	}
	call := job.Call[distanceArgs]{Parties: c.Spec().PartyNames(), TimeoutMS: cfg.p.TimeoutMS}
	done, err := distanceRound.Run(ctx, c, call, func(o *job.Outcome[distanceOutput]) (distanceDecision, error) {
		return decide(o, cfg)
	})
	if err != nil {
		return nil, err
	}
	d := done.Decision
	return job.Result{
		"distance": d.Distance, "compared": d.Compared, "threshold": cfg.p.Threshold,
		"keyholder": cfg.p.KeyHolder, "align": cfg.p.Align,
		"protocol": "Yang-Zhong-Wright generalised Hamming distance (Fig. 2), ElGamal on ristretto255",
	}, nil
}

// decide checks the two outputs (the holder's is the holder's, both
// compared as many ids, the matches within them) and forms the distance.
func decide(o *job.Outcome[distanceOutput], cfg *config) (distanceDecision, error) {
	var d distanceDecision
	if err := o.Err(); err != nil {
		return d, err
	}
	h, ok := o.Results[cfg.p.KeyHolder]
	other := cfg.sides[0].Party
	if other == cfg.p.KeyHolder {
		other = cfg.sides[1].Party
	}
	c, okc := o.Results[other]
	switch {
	case !ok || !okc:
		return d, errors.New("hamming: a party sent no output")
	case !h.Holder || c.Holder:
		return d, errors.New("hamming: the outputs do not come from the roles the spec gives")
	case h.Compared != c.Compared:
		return d, errors.New("hamming: the parties compared different numbers of ids")
	case h.Matches < 0 || h.Matches > h.Compared:
		return d, fmt.Errorf("hamming: key holder %s reported an impossible count", cfg.p.KeyHolder)
	}
	return distanceDecision{Compared: h.Compared, Distance: h.Compared - h.Matches}, nil
}

// Open opens a party's session.
func (Kind) Open(_ context.Context, p job.Participant) (job.Session, error) {
	cfg, err := parse(p.Spec())
	if err != nil {
		return nil, err
	}
	if _, _, ok := cfg.side(p.Self()); !ok {
		return nil, fmt.Errorf("hamming: %s is no party of the job", p.Self())
	}
	return &session{p: p, cfg: cfg}, nil
}

type session struct {
	p   job.Participant
	cfg *config
}

func (s *session) Close() {}

// Step runs the distance step: round 0 only, and only while the log holds
// no distance committed (the spec fixes every input, so a re-run after a
// failure compares the same columns; a committed distance is never
// computed twice).
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if err := hamdist.CheckOnce("hamming", s.p.Self(), step, distanceRound.Phase, "distance", distanceRound.History(s.p.History())); err != nil {
		return nil, err
	}
	return distanceRound.Serve(step, func(distanceArgs) (distanceOutput, error) {
		out, err := s.compare(ctx, step)
		if err != nil {
			return out, fmt.Errorf("hamming: party %s: %w", s.p.Self(), err)
		}
		return out, nil
	})
}

// compare aligns the rows with the peer and runs the party's side of the
// exchange on the step's channel "compare".
func (s *session) compare(ctx context.Context, step job.Step) (distanceOutput, error) {
	cfg := s.cfg
	me, peer, _ := cfg.side(s.p.Self())
	holder := cfg.holder(me)
	t, rows, err := hamdist.Rows(ctx, s.p, step, cfg.sides[me], cfg.sides[peer].Party, cfg.p.Align, holder)
	if err != nil {
		return distanceOutput{}, err
	}
	col := cfg.columns[me]
	var vals []hamdist.Value
	var win hamdist.Windows
	if cfg.p.Threshold > 0 {
		ints, err := hamdist.IntValues(t, col, rows)
		if err != nil {
			return distanceOutput{}, err
		}
		vals, win = hamdist.Ints(ints), hamdist.ThresholdWindows(ints, cfg.p.Threshold)
	} else {
		if vals, err = hamdist.ExactValues(t, col, rows); err != nil {
			return distanceOutput{}, err
		}
		win = hamdist.ExactWindows(vals)
	}
	net := job.StepNet{Party: s.p, Step: step.Sub("compare")}
	peerName := cfg.sides[peer].Party
	if !holder {
		err := hamdist.RunComparer(ctx, net, peerName, win, cfg.p.MinIDs)
		return distanceOutput{Compared: len(rows)}, tooFew(err)
	}
	m, err := hamdist.RunHolder(ctx, net, peerName, vals, 2*cfg.p.Threshold+1, cfg.p.MinIDs)
	return distanceOutput{Holder: true, Compared: len(rows), Matches: m}, tooFew(err)
}

// tooFew names the param behind hamdist.ErrTooFew.
func tooFew(err error) error {
	if errors.Is(err, hamdist.ErrTooFew) {
		return errors.New("fewer ids to compare than params.min_ids")
	}
	return err
}
