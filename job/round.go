package job

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/wire"
)

// Round is one kind of step of a job kind, typed as Lattigo types each
// round of its multiparty protocols: A is the coordinator's public args,
// O one party's output (to the coordinator alone), D the coordinator's
// public decision. The round encodes and decodes all three strictly, folds
// the parties' outputs, and writes a failed step into the log once, so a
// kind handles no bare bytes and no failure text of its own.
type Round[A, O, D any] struct {
	// Phase names the round's steps in the log and in messages.
	Phase string
}

// Call is one step of a round as the coordinator asks for it.
type Call[A any] struct {
	Round int
	// Parties take part (the spec's parties when nil).
	Parties []string
	Args    A
	// TimeoutMS is the step's timeout (the node's default when zero).
	TimeoutMS int64
}

// Outcome is what the parties of one attempt returned, decoded. It reaches
// the coordinator only; decide folds it into the public decision.
type Outcome[O any] struct {
	Step Step
	// Results holds each party's decoded output.
	Results map[string]O
	// Failed names the parties that failed, timed out or sent a malformed
	// output, with the reason (texts the runtime and the parties wrote).
	Failed map[string]string
	// Silent lists the parties that sent nothing in time or whose node
	// could not be reached (they are in Failed too).
	Silent []string
}

// Curable reports whether running the step again may succeed: every
// failed party was silent, or failed with one of the transient errors
// (a kind's own "no message in time", "not delivered"), which a party's
// reason carries as text.
func (o *Outcome[O]) Curable(transient ...error) bool {
	for p, why := range o.Failed {
		if slices.Contains(o.Silent, p) {
			continue
		}
		if !slices.ContainsFunc(transient, func(e error) bool { return strings.Contains(why, e.Error()) }) {
			return false
		}
	}
	return true
}

// Err returns nil when no party failed, else an error naming every
// failing party and its reason, in party order.
func (o *Outcome[O]) Err() error {
	if len(o.Failed) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrParties, PartyCauses(o.Failed))
}

// PartyCauses lists parties and why each failed, in party order:
// "party a: why; party b: why". A cause that already starts by naming its
// party, as job.LoadTables' errors ("party a: table t: ...") and the
// refusals of a step ("party a refuses finish round 0: ...") do, is not
// prefixed twice.
func PartyCauses(why map[string]string) string {
	var parts []string
	for _, p := range slices.Sorted(maps.Keys(why)) {
		if msg := why[p]; strings.HasPrefix(msg, "party "+p+": ") || strings.HasPrefix(msg, "party "+p+" ") {
			parts = append(parts, msg)
		} else {
			parts = append(parts, fmt.Sprintf("party %s: %s", p, msg))
		}
	}
	return strings.Join(parts, "; ")
}

// ErrParties wraps the failure of a step at some of its parties.
var ErrParties = errors.New("step failed")

// Done is a finished step.
type Done[D any] struct {
	Decision D
	Record   *Record
	// Replayed is set when the log already held the step finished (a new
	// leader replaying Coordinate): nothing ran.
	Replayed bool
}

// StepError is a step that failed: the error decide returned, committed in
// the step's record so that a replay fails the same way.
type StepError struct {
	Phase string
	Round int
	Msg   string
}

func (e *StepError) Error() string { return fmt.Sprintf("%s round %d: %s", e.Phase, e.Round, e.Msg) }

// Run runs one step of the round: it starts it (or finds it finished in
// the log), waits for the parties' outputs, decodes them and lets decide
// fold them into the decision, which it commits. decide sees private
// outputs; what it returns is seen by every member. An error from decide
// fails the step: its text is committed, and Run returns it (a
// *StepError), as it does when a replay finds the step failed.
func (r Round[A, O, D]) Run(ctx context.Context, c Coordinator, call Call[A], decide func(*Outcome[O]) (D, error)) (*Done[D], error) {
	args, err := wire.Marshal(&call.Args)
	if err != nil {
		return nil, fmt.Errorf("%s round %d: encode args: %w", r.Phase, call.Round, err)
	}
	step := Step{Phase: r.Phase, Round: call.Round, Parties: call.Parties, Args: args, TimeoutMS: call.TimeoutMS}
	a, err := c.Start(ctx, step)
	if err != nil {
		return nil, err
	}
	if rec := a.Record(); rec != nil {
		return r.committed(rec, true)
	}
	outs, err := a.Wait(ctx)
	if err != nil {
		return nil, err
	}
	o := r.decode(a.Step(), outs)
	d, derr := decide(o)
	var b []byte
	if derr == nil {
		if b, err = wire.Marshal(&d); err != nil {
			return nil, fmt.Errorf("%s round %d: encode decision: %w", r.Phase, call.Round, err)
		}
	}
	failure := ""
	if derr != nil {
		failure = derr.Error()
	}
	rec, err := a.Commit(ctx, outs, b, failure)
	if err != nil {
		return nil, err
	}
	return r.committed(rec, false)
}

// committed reads a committed record: its decision, or its failure.
func (r Round[A, O, D]) committed(rec *Record, replayed bool) (*Done[D], error) {
	if rec.Error != "" {
		return nil, &StepError{Phase: rec.Step.Phase, Round: rec.Step.Round, Msg: rec.Error}
	}
	d, err := r.Decision(rec)
	if err != nil {
		return nil, err
	}
	return &Done[D]{Decision: d, Record: rec, Replayed: replayed}, nil
}

// decode turns an attempt's outputs into typed results; a malformed
// output fails its party.
func (r Round[A, O, D]) decode(step Step, outs *Outputs) *Outcome[O] {
	o := &Outcome[O]{Step: step, Results: map[string]O{}, Failed: map[string]string{}, Silent: slices.Clone(outs.Silent)}
	for p, why := range outs.Failed {
		o.Failed[p] = why
	}
	for p, b := range outs.Results {
		var v O
		if err := wire.Unmarshal(b, &v); err != nil {
			o.Failed[p] = fmt.Sprintf("malformed %s output: %v", r.Phase, err)
			continue
		}
		o.Results[p] = v
	}
	return o
}

// Serve runs one step of the round at a party: it decodes the step's args
// strictly, runs f and encodes its output.
func (r Round[A, O, D]) Serve(step Step, f func(A) (O, error)) ([]byte, error) {
	a, err := r.Args(step)
	if err != nil {
		return nil, err
	}
	o, err := f(a)
	if err != nil {
		return nil, err
	}
	return wire.Marshal(&o)
}

// Args decodes a step's args (a party re-deriving what the coordinator
// should have asked, from the log, compares them).
func (r Round[A, O, D]) Args(step Step) (A, error) {
	var a A
	if step.Phase != r.Phase {
		return a, fmt.Errorf("step %s/%d is not a %s step", step.Phase, step.Round, r.Phase)
	}
	if err := wire.Unmarshal(step.Args, &a); err != nil {
		return a, fmt.Errorf("%s round %d: args from coordinator %s: %w", r.Phase, step.Round, step.Coordinator, err)
	}
	return a, nil
}

// Decision decodes a committed record's decision (a session folding
// History, or a party checking what the coordinator committed).
func (r Round[A, O, D]) Decision(rec *Record) (D, error) {
	var d D
	if rec.Step.Phase != r.Phase {
		return d, fmt.Errorf("record of step %s/%d is not a %s step", rec.Step.Phase, rec.Step.Round, r.Phase)
	}
	if rec.Error != "" {
		return d, &StepError{Phase: rec.Step.Phase, Round: rec.Step.Round, Msg: rec.Error}
	}
	if err := wire.Unmarshal(rec.Decision, &d); err != nil {
		return d, fmt.Errorf("%s round %d: committed decision: %w", r.Phase, rec.Step.Round, err)
	}
	return d, nil
}

// History returns the records of this round's steps in a job's history,
// in order.
func (r Round[A, O, D]) History(h []*Record) []*Record {
	var out []*Record
	for _, rec := range h {
		if rec.Step.Phase == r.Phase {
			out = append(out, rec)
		}
	}
	return out
}
