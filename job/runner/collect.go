package runner

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// OutputType is the message a party sends the coordinator of an attempt
// when it has run the step: its output, or the error it failed with.
const OutputType = "job/output"

// report is the body of an output message. It carries no byte counts:
// what a party sent in one step tells of its data (a PSI's set size), and
// the coordinator has no need of it.
type report struct {
	Output []byte `msgpack:"output"`
	Error  string `msgpack:"error"`
	// Restarted says the party's node restarted in the attempt and lost
	// what it had received: it is Silent, like an unreachable party, and
	// the attempt ends at once.
	Restarted bool `msgpack:"restarted,omitempty"`
	// CutShort says the party's step failed after another party of the
	// attempt told it that it had failed (peerfail.go): the party is in
	// neither Results nor Failed, unless no party failed.
	CutShort bool `msgpack:"cut_short,omitempty"`
}

// ErrCannotTakePart is a watch's cause for a party that is reachable but
// cannot take part in any step (its Raft log cannot be written, so it
// never learns of one); collect gives its text as the party's failure.
var ErrCannotTakePart = errors.New("cannot take part")

// collect gathers the reports of every party of an attempt, received
// through the coordinator's Party, into Outputs. It returns when every
// party has reported or ctx ends (the caller bounds ctx by the step's
// timeout plus a grace period for the report itself); a party that has not
// reported by then is Failed and Silent. watch, if not nil, runs alongside
// and calls unreachable for a party found down: that party is Silent and
// the attempt ends at once, since the others cannot finish without it.
// progress, if not nil, is called with the number of reports so far. A
// party that reports its node restarted in the attempt is Failed and
// Silent too, ends the attempt at once, and is returned in restarted. A
// party whose step another party's failure cut short (report.CutShort) is
// in neither Results nor Failed, unless no party failed.
func collect(ctx context.Context, coord job.Party, step job.Step,
	watch func(ctx context.Context, unreachable func(party string, why error)), progress func(done int)) (outs *job.Outputs, restarted []string) {
	outs = &job.Outputs{Coordinator: step.Coordinator, Results: map[string][]byte{}, Failed: map[string]string{}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var mu sync.Mutex
	var wg sync.WaitGroup
	aborted := false
	reported := map[string]bool{}
	cutShort := map[string]string{}
	done := 0
	if watch != nil {
		wg.Go(func() {
			watch(ctx, func(p string, why error) {
				mu.Lock()
				defer mu.Unlock()
				if aborted || reported[p] {
					return
				}
				aborted = true
				if errors.Is(why, ErrCannotTakePart) {
					outs.Failed[p] = why.Error()
				} else {
					outs.Failed[p] = fmt.Sprintf("unreachable: %v", why)
				}
				outs.Silent = append(outs.Silent, p)
				cancel()
			})
		})
	}
	for _, p := range step.Parties {
		wg.Go(func() {
			m, err := coord.Receive(ctx, p, step.Key(OutputType))
			var r report
			if err == nil {
				err = wire.Unmarshal(m.Body, &r)
			}
			mu.Lock()
			defer mu.Unlock()
			reported[p] = true
			if aborted && err != nil {
				return // cut short because another party is unreachable
			}
			switch {
			case err != nil:
				outs.Failed[p] = fmt.Sprintf("no output within %s: %v", step.Timeout(), err)
				outs.Silent = append(outs.Silent, p)
			case r.Restarted:
				outs.Failed[p] = r.Error
				outs.Silent = append(outs.Silent, p)
				restarted = append(restarted, p)
				aborted = true
				cancel()
			case r.CutShort:
				cutShort[p] = r.Error
			case r.Error != "":
				outs.Failed[p] = r.Error
			default:
				outs.Results[p] = r.Output
			}
			done++
			if progress != nil {
				progress(done)
			}
			if done == len(step.Parties) {
				cancel() // stops the watch
			}
		})
	}
	wg.Wait()
	if len(outs.Failed) == 0 {
		// Cut short by a party that did not fail: the claims are theirs.
		maps.Copy(outs.Failed, cutShort)
	}
	slices.Sort(outs.Silent)
	slices.Sort(restarted)
	return outs, restarted
}
