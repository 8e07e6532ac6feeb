package secureagg

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Outcome is one party's report of an aggregation step to the coordinator
// (a kind's step output, or part of one). The root's carries the sum; the
// others carry the rest of the result (their sum is the root's, so a long
// vector crosses the network once more, not N times). A party that could
// not finish names the parties it missed.
type Outcome struct {
	Sum      []float64         `msgpack:"sum"`
	Included []string          `msgpack:"included"`
	Excluded map[string]string `msgpack:"excluded"`
	Noise    *NoiseReport      `msgpack:"noise"`
	Missing  []string          `msgpack:"missing"`
	// Formed is set when this party saw the step's total formed: a
	// decryption may have followed, so the step must never be re-run over
	// other parties.
	Formed bool `msgpack:"formed"`
}

// Report turns what Aggregate returned into this party's Outcome: a
// Result, or the parties a MissingError names. Any other error is returned
// as it is, so the party's step fails with it.
func Report(self string, step job.Step, res *Result, err error) (*Outcome, error) {
	var miss *MissingError
	switch {
	case errors.As(err, &miss):
		return &Outcome{Missing: miss.Parties, Formed: miss.Formed}, nil
	case err != nil:
		return nil, err
	case res == nil:
		return nil, fmt.Errorf("secureagg: no result to report")
	}
	o := &Outcome{Sum: res.Sum, Included: res.Included, Excluded: res.Excluded, Noise: res.Noise, Formed: true}
	if self != Root(step) {
		o.Sum = nil
	}
	return o, nil
}

// Verdict is the coordinator's fold of one aggregation step's outcomes.
type Verdict struct {
	// Result is the root's result when it includes every party of the
	// step (whatever else failed after it was formed: a lost report, a
	// late share).
	Result *Result
	// Missing names the parties whose input did not reach the total, and
	// why: silent or unreachable, named missing by others, or failed on
	// their own before (their error).
	Missing map[string]string
	// Withdrew names those of Missing that failed with an error of their
	// own (their input, their policy), as opposed to going silent: a
	// re-run does not change their answer.
	Withdrew map[string]string
	// Failed names the parties that failed after the total was formed,
	// with their errors: the step failed, their inputs were in it.
	Failed map[string]string
	// Formed is set when some party reported the total formed: the step
	// must not be re-run over fewer parties, whose difference would give
	// the missing parties' inputs away.
	Formed bool
}

// Fold folds an aggregation step's outcomes (the parties' decoded
// outputs, with the parties that failed and those that went silent). It
// fails only on an outcome no honest party sends, naming the party.
func Fold(step job.Step, outcomes map[string]*Outcome, failed map[string]string, silent []string) (*Verdict, error) {
	v := &Verdict{Missing: map[string]string{}, Failed: map[string]string{}, Withdrew: map[string]string{}}
	root := Root(step)
	named := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(outcomes)) {
		o := outcomes[p]
		if err := o.check(); err != nil {
			return nil, fmt.Errorf("party %s: %w", p, err)
		}
		v.Formed = v.Formed || o.Formed
		for _, m := range o.Missing {
			named[m] = true
		}
		if p == root && len(o.Missing) == 0 && slices.Equal(o.Included, slices.Sorted(slices.Values(step.Parties))) {
			v.Result = &Result{Sum: o.Sum, Included: o.Included, Excluded: o.Excluded, Noise: o.Noise}
		}
	}
	for _, p := range silent {
		v.Missing[p] = "did not answer in time"
	}
	for p, why := range failed {
		if _, ok := v.Missing[p]; ok {
			continue
		}
		if v.Formed && !named[p] {
			v.Failed[p] = why // its input was in the total
		} else {
			v.Missing[p], v.Withdrew[p] = why, why // it withdrew before the total was formed
		}
	}
	for p := range named {
		if _, ok := v.Missing[p]; !ok {
			v.Missing[p] = "its input did not reach the total"
		}
	}
	return v, nil
}

// check refuses an outcome no honest party sends.
func (o *Outcome) check() error {
	if len(o.Missing) > 0 && (len(o.Sum) > 0 || len(o.Included) > 0) {
		return fmt.Errorf("%w: an outcome with both a sum and missing parties", wire.ErrMalformed)
	}
	for _, v := range o.Sum {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Errorf("%w: the sum holds a value that is not finite", wire.ErrMalformed)
		}
	}
	return nil
}

// EncodeReport is Report encoded, for kinds whose step output carries the
// outcome as bytes.
func EncodeReport(self string, step job.Step, res *Result, err error) ([]byte, error) {
	o, err := Report(self, step, res, err)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(o)
}

// DecodeOutcome reverses EncodeReport on the coordinator: the Result, or a
// *MissingError to re-run the step without the named parties.
func DecodeOutcome(b []byte) (*Result, error) {
	var o Outcome
	if err := wire.Unmarshal(b, &o); err != nil {
		return nil, fmt.Errorf("secureagg: decode outcome: %w", err)
	}
	if err := o.check(); err != nil {
		return nil, fmt.Errorf("secureagg: decode outcome: %w", err)
	}
	if len(o.Missing) > 0 {
		return nil, &MissingError{Parties: o.Missing, Formed: o.Formed}
	}
	return &Result{Sum: o.Sum, Included: o.Included, Excluded: o.Excluded, Noise: o.Noise}, nil
}
