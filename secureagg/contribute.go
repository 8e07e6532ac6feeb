package secureagg

import (
	"context"
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/job"
)

// Contribution is what one party brings to an aggregation of its data:
// the vector, what of its data the vector sums (each input is put to the
// node's policy with the step's real party set and row counts), and the
// noise draws it spends. Unusable, when set, is why the party cannot
// compute its vector: it withdraws, so that the others go on without it.
type Contribution struct {
	Vector   []float64
	Inputs   []job.Aggregate
	Spends   []job.Spend
	Unusable error
}

// Contribute is one party's turn in an aggregation step, the one sequence
// every kind runs: its policy's guard admits the step (the floor on
// parties always, then each input, then each noise draw), and a party that
// is refused or cannot compute its vector withdraws at once, naming why;
// otherwise the vector is aggregated and the party's outcome reported. A
// step with no inputs (a probe, a key's confirmation) sums no data of the
// party, and the guard still checks its parties.
//
// A party that saw the total formed, that held it when the root reported
// a failure, or that a decryptor told it made a share of the total (a
// notice sent to every party directly, so that a root cannot keep it
// back), tells the guard (Guard.Formed), as a decryptor's runtime does
// when it sends its share.
//
// It returns the party's Result (nil when the total did not reach it) and
// its Outcome; the error is a *Withdrawn, or Aggregate's failure other than
// missing parties (see Report).
func Contribute(ctx context.Context, p job.Participant, step job.Step, cfg Config, c Contribution) (*Result, *Outcome, error) {
	if c.Unusable == nil {
		c.Unusable = Admit(p.Guard(), step, c)
	}
	if c.Unusable != nil {
		return nil, nil, &Withdrawn{Cause: Withdraw(ctx, p, step, cfg, c.Unusable)}
	}
	if len(c.Vector) == 0 {
		return nil, nil, fmt.Errorf("secureagg: party %s: empty input vector", p.Self())
	}
	res, err := Aggregate(ctx, p, step, cfg, c.Vector)
	// ErrRoot comes only after this party held the total: the root may
	// have decrypted it before it reported its failure. ErrFormed comes
	// when a decryptor told this party directly that it made a share of a
	// total this party never received.
	mayBeDecrypted := errors.Is(err, ErrRoot) || errors.Is(err, ErrFormed)
	o, err := Report(p.Self(), step, res, err)
	if o != nil && o.Formed || mayBeDecrypted {
		// The total may have been decrypted: the runtime's record, so
		// that no later step of the job leaves out a party of it.
		if ferr := p.Guard().Formed(step); ferr != nil {
			return res, o, ferr
		}
	}
	return res, o, err
}

// Withdrawn is Contribute's error when the party withdrew: its cause is
// the refusal or why the party could not compute its vector (joined with
// any failure to tell the others).
type Withdrawn struct{ Cause error }

func (w *Withdrawn) Error() string { return w.Cause.Error() }
func (w *Withdrawn) Unwrap() error { return w.Cause }

// Admit asks the guard about every input and noise draw of c, in order,
// with the step's real party set; the first refusal is the cause the
// party withdraws with. Contribute runs it; a kind that computes on its
// parties' data by other means than an aggregation (quantile's exponential
// mechanism, package mpc) runs the same sequence.
func Admit(g job.Guard, step job.Step, c Contribution) error {
	inputs := c.Inputs
	if len(inputs) == 0 {
		inputs = []job.Aggregate{{Parties: step.Parties}}
	}
	for _, a := range inputs {
		a.Parties = step.Parties // the step's real party set, never the kind's word
		if err := g.Aggregate(step, a); err != nil {
			return err
		}
	}
	for _, s := range c.Spends {
		if err := g.Spend(step, s); err != nil {
			return err
		}
	}
	return nil
}
