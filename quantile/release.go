package quantile

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/job"
)

// This file is the job's last step, the release (the package doc's Exact
// releases): once the search is finished, every party checks the last
// rounds' counts, derives the values from the log and asks its policy for
// each value and each of its tables; the coordinator publishes the values
// only when every party allowed them. Each value was counted against the
// allowance before the count round that could finish its search
// (spendBeforeLast): the committed counts of that round determine the
// value, so a coordinator that skipped the release step would otherwise
// publish it uncounted.

// releaseArgs are the release step's public input: the values the
// coordinator is to publish, in the order of params.quantiles.
type releaseArgs struct {
	Values []float64 `msgpack:"values"`
}

// released is a party's output of the release step, to the coordinator
// alone: that its policy allowed every value. It carries nothing else; a
// party whose policy refuses fails the step with the refusal.
type released struct {
	Allowed bool `msgpack:"allowed"`
}

// releaseDecision is what the coordinator commits for a release step:
// released, or the parties it waited for in vain (the step is re-run as
// the next round).
type releaseDecision struct {
	Released bool              `msgpack:"released"`
	Retry    map[string]string `msgpack:"retry"`
}

// releaseRound is the release step.
var releaseRound = job.Round[releaseArgs, released, releaseDecision]{Phase: "release"}

// values are the results' values.
func values(qs []Quantile) []float64 {
	out := make([]float64, len(qs))
	for i, q := range qs {
		out[i] = q.Value
	}
	return out
}

// publish runs the release step over every party until each has allowed
// the values, re-running it (after the count rounds' backoff) while some
// party is silent, up to params.retries times in a row; a refusal fails
// the job. It returns how many times the step was re-run.
func publish(ctx context.Context, c job.Coordinator, p *Params, parties []string, s *search) (int, error) {
	a := releaseArgs{Values: values(s.results())}
	for round := 0; ; round++ {
		call := job.Call[releaseArgs]{Round: round, Parties: parties, Args: a, TimeoutMS: p.TimeoutMS}
		done, err := releaseRound.Run(ctx, c, call, decideRelease)
		if err != nil {
			return 0, err
		}
		d := done.Decision
		if d.Released {
			return round, nil
		}
		if round+1 > p.Retries {
			return 0, fmt.Errorf("quantile: the release produced no answer %d times in a row, and nothing is published: %s", round+1, describe(d.Retry))
		}
		if !done.Replayed {
			if err := wait(ctx, round+1); err != nil {
				return 0, err
			}
		}
	}
}

// decideRelease folds a release step's outputs: released when every party
// allowed it; the step fails when a party refused (its policy, or a check
// on the coordinator); else the parties to wait for.
func decideRelease(o *job.Outcome[released]) (releaseDecision, error) {
	refused := map[string]string{}
	retry := map[string]string{}
	for name, why := range o.Failed {
		if slices.Contains(o.Silent, name) {
			retry[name] = why
		} else {
			refused[name] = why
		}
	}
	for name, r := range o.Results {
		if !r.Allowed {
			refused[name] = "allowed nothing"
		}
	}
	if len(refused) > 0 {
		return releaseDecision{}, fmt.Errorf("quantile: the release was refused, and nothing is published: %s", job.PartyCauses(refused))
	}
	for _, name := range o.Step.Parties {
		if _, ok := o.Results[name]; !ok && retry[name] == "" {
			retry[name] = "gave no answer"
		}
	}
	if len(retry) > 0 {
		return releaseDecision{Retry: retry}, nil
	}
	return releaseDecision{Released: true}, nil
}

// release takes part in the release step: it replays and checks every
// committed round, refuses values the log does not determine, and asks
// the policy for each value and each of the party's tables, with the
// rank, row count and bracket count the committed counts give. It asks
// once per job: a re-run of the step (a party silent, a new leader)
// releases the same values, which the job publishes once, so a party that
// allowed them answers from its job scratch.
func (s *session) release(step job.Step) ([]byte, error) {
	return releaseRound.Serve(step, func(a releaseArgs) (released, error) {
		if s.params.Noise != nil {
			return released{}, fmt.Errorf("party %s refuses release round %d: coordinator %s asks to release a noised quantile's values, "+
				"which have no release step", s.p.Self(), step.Round, step.Coordinator)
		}
		replayed, err := s.replay(step)
		if err != nil {
			return released{}, err
		}
		srch := replayed.(*search)
		if !srch.finished() || !slices.Equal(values(srch.results()), a.Values) {
			return released{}, fmt.Errorf("party %s refuses release round %d: coordinator %s asks to release values the log does not determine",
				s.p.Self(), step.Round, step.Coordinator)
		}
		if s.loadErr != nil {
			return released{}, s.loadErr
		}
		if done, err := s.allowed(); err != nil || done {
			return released{Allowed: done}, err
		}
		for i := range a.Values {
			// Counted before the round that could finish it
			// (spendBeforeLast): checked here, not counted again.
			spent, err := s.spent(i)
			if err != nil {
				return released{}, err
			}
			if err := s.askRelease(step, srch, i, spent); err != nil {
				return released{}, err
			}
		}
		if err := s.p.Secrets().WriteSecret(s.allowedName(), []byte("allowed\n")); err != nil {
			return released{}, fmt.Errorf("party %s: keep that its policy allowed the release: %w", s.p.Self(), err)
		}
		return released{Allowed: true}, nil
	})
}

// allowedName is the job scratch file that records that this party's
// policy allowed the job's values (which the log determines: there is one
// set of values per job).
func (s *session) allowedName() string { return "jobs/" + s.p.JobID() + "/quantile/released" }

// allowed reports whether this party's policy already allowed the job's
// values.
func (s *session) allowed() (bool, error) {
	_, err := s.p.Secrets().ReadSecret(s.allowedName())
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("party %s: read whether its policy allowed the release: %w", s.p.Self(), err)
	}
	return true, nil
}

// spendBeforeLast counts, with this node's policy, the exact release of
// every quantile that the round with thresholds ts could finish, before
// the party contributes to the round: the round's decrypted counts
// determine the value (every member can derive it from the log), so the
// release step cannot be where it is counted, or a coordinator that skips
// that step would publish the value uncounted. Each value is counted once
// per job (the job scratch remembers it), and a party whose column is
// unusable, whose data enters no count, counts nothing. The policy also
// checks the value's rank and the rows of its bracket as they stand; the
// final bracket's rows are known only from the round's counts, so the
// release step checks them.
func (s *session) spendBeforeLast(step job.Step, srch *search, ts []float64) error {
	if s.loadErr != nil {
		return nil
	}
	for i := range srch.qs {
		if !srch.mayFinish(i, ts) {
			continue
		}
		if !srch.counted {
			return fmt.Errorf("party %s refuses count round %d: coordinator %s asks a round that could finish a quantile before the pooled row count is known, so its release could not be checked first",
				s.p.Self(), step.Round, step.Coordinator)
		}
		spent, err := s.spent(i)
		switch {
		case err != nil:
			return err
		case spent:
			continue
		}
		if err := s.askRelease(step, srch, i, false); err != nil {
			return err
		}
		if err := s.p.Secrets().WriteSecret(s.spentName(i), []byte("spent\n")); err != nil {
			return fmt.Errorf("party %s: keep that its policy counted a release: %w", s.p.Self(), err)
		}
	}
	return nil
}

// spentName is the job scratch file that records that this party's policy
// counted quantile i's release.
func (s *session) spentName(i int) string {
	return "jobs/" + s.p.JobID() + "/quantile/spent/" + strconv.Itoa(i)
}

// spent reports whether this party's policy already counted quantile i's
// release in this job.
func (s *session) spent(i int) (bool, error) {
	_, err := s.p.Secrets().ReadSecret(s.spentName(i))
	switch {
	case errors.Is(err, os.ErrNotExist):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("party %s: read whether its policy counted a release: %w", s.p.Self(), err)
	}
	return true, nil
}
