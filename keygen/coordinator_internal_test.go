package keygen

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/secureagg"
)

// evilCoordinator searches honestly, then asks a finish or install step
// whose args the log does not determine. The parties run the honest
// sessions (Open is Kind's).
type evilCoordinator struct {
	Kind
	// finish and install turn the args the log determines into the ones
	// asked for.
	finish  func(finishArgs) finishArgs
	install func(installArgs) installArgs
}

func (k evilCoordinator) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	found, round, _, _, err := searchRounds(ctx, c, prm, parties)
	if err != nil {
		return nil, err
	}
	fin, err := finishRound.Run(ctx, c, job.Call[finishArgs]{Parties: parties, Args: k.finish(finishArgs{Round: round, Attempt: found.Attempt})},
		func(o *job.Outcome[finishOutput]) (finishDecision, error) { return decideFinish(o, parties) })
	if err != nil {
		return nil, err
	}
	args := k.install(installArgs{Attempt: fin.Decision.Attempt, KeyID: fin.Decision.KeyID})
	_, err = installRound.Run(ctx, c, job.Call[installArgs]{Parties: parties, Args: args},
		func(o *job.Outcome[installOutput]) (installDecision, error) {
			return decideInstall(o, parties, args.KeyID)
		})
	return nil, err
}

func same[A any](a A) A { return a }

// A coordinator that asks a party to convert the shares of a search
// attempt other than the committed one, or to install a key other than the
// one the finish step committed, is refused by every party, which names
// it; the step reports nothing and no party installs a key.
func TestCoordinatorCannotChooseKey(t *testing.T) {
	cases := map[string]evilCoordinator{
		"finish another attempt": {finish: func(a finishArgs) finishArgs { a.Attempt++; return a }, install: same[installArgs]},
		"install another key": {finish: same[finishArgs], install: func(a installArgs) installArgs {
			a.KeyID = bytes.Repeat([]byte{1}, 32)
			return a
		}},
	}
	for name, evil := range cases {
		t.Run(name, func(t *testing.T) {
			sp := spec(t, 3, 512, ", batch: 256, chunk: 512")
			sec, dirs := secrets(t, sp)
			ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
			defer cancel()
			rep, err := jobtest.Run(ctx, evil, sp, jobtest.Options{Secrets: sec})
			if err == nil {
				t.Fatal("the job did not fail")
			}
			recs := rep.Records()
			last := recs[len(recs)-1]
			if last.Error == "" {
				t.Fatalf("the last step %s did not fail: %v", last.Step.Phase, err)
			}
			for _, p := range sp.PartyNames() {
				why := last.Failed[p]
				if !strings.Contains(why, "party "+p+" refuses "+last.Step.Phase) || !strings.Contains(why, "coordinator "+rep.Leaders[0]) {
					t.Errorf("%s: %q, want a refusal naming the coordinator", p, why)
				}
				if _, err := os.Stat(filepath.Join(dirs[p], secureagg.ShareFile)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("%s installed a key: %v", p, err)
				}
			}
			for _, o := range rep.Outputs {
				if o.Step.Phase == last.Step.Phase {
					t.Errorf("%s reported an output of the refused %s step", o.Party, o.Step.Phase)
				}
			}
			t.Log(last.Failed[sp.PartyNames()[0]])
		})
	}
}
