package keygen

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
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
	if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, prm.TimeoutMS); err != nil {
		return nil, err
	}
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
	t.Parallel()
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
				if _, err := os.Stat(filepath.Join(dirs[p], keyring.PaillierShareFile)); !errors.Is(err, os.ErrNotExist) {
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

// forgedCommitRound is the joint seed's first round as a coordinator that
// forges its decision would run it (the round's types are package job's).
var forgedCommitRound = job.Round[struct{}, job.SeedCommitment, job.SeedCommitments]{Phase: job.PhaseSeedCommit}

// grindingCoordinator tries to choose the public randomness: it skips the
// draw (so that the leader's job seed would be used), or replaces pb's
// commitment with one to a contribution of its own choice.
type grindingCoordinator struct {
	Kind
	forge bool
}

func (k grindingCoordinator) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	js := jointSeed(c.JobID(), c.Spec())
	if !k.forge {
		if prm.Scheme == SchemeBGV {
			_, err := latticeGenRound.Run(ctx, c, job.Call[latticeGenArgs]{Parties: parties, Args: latticeGenArgs{Quorum: lattice.DefaultQuorum(len(parties))}},
				func(o *job.Outcome[latticeKeyOutput]) (latticeKeyDecision, error) { return agreeOnKey(o, parties) })
			return nil, err
		}
		_, _, _, _, err := searchRounds(ctx, c, prm, parties)
		return nil, err
	}
	call := job.Call[struct{}]{Parties: parties}
	if _, err := forgedCommitRound.Run(ctx, c, call, func(o *job.Outcome[job.SeedCommitment]) (job.SeedCommitments, error) {
		var d job.SeedCommitments
		for _, p := range parties {
			cm := o.Results[p]
			if p == "pb" {
				cm = js.Commit("pb", job.Contribution{1, 2, 3})
			}
			d.Commitments = append(d.Commitments, cm)
		}
		return d, o.Err()
	}); err != nil {
		return nil, err
	}
	_, err = js.Draw(ctx, c, 0) // the commit step is answered from the log: the reveal runs
	return nil, err
}

// A coordinator cannot choose keygen's public randomness: parties refuse
// to search or generate before the joint seed is drawn, naming the
// coordinator, and a party whose commitment the coordinator replaced
// refuses to open; nothing is installed.
func TestCoordinatorCannotChooseSeed(t *testing.T) {
	t.Parallel()
	for _, scheme := range []string{SchemePaillier, SchemeBGV} {
		for _, forge := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s forge=%v", scheme, forge), func(t *testing.T) {
				sp := spec(t, 3, 512, ", batch: 256, chunk: 512, scheme: "+scheme)
				sec, dirs := secrets(t, sp)
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				rep, err := jobtest.Run(ctx, grindingCoordinator{forge: forge}, sp, jobtest.Options{Secrets: sec})
				if err == nil {
					t.Fatal("the job did not fail")
				}
				recs := rep.Records()
				last := recs[len(recs)-1]
				refusers := sp.PartyNames()
				if forge {
					refusers = []string{"pb"}
					if last.Step.Phase != job.PhaseSeedReveal {
						t.Fatalf("the last step is %s, not the reveal", last.Step.Phase)
					}
				}
				for _, p := range refusers {
					why := last.Failed[p]
					if !strings.Contains(why, "party "+p+" refuses "+last.Step.Phase) || !strings.Contains(why, "coordinator "+rep.Leaders[0]) {
						t.Errorf("%s: %q, want a refusal naming the coordinator", p, why)
					}
				}
				for _, o := range rep.Outputs {
					if o.Step.Phase == last.Step.Phase && slices.Contains(refusers, o.Party) {
						t.Errorf("%s reported an output of the refused %s step", o.Party, o.Step.Phase)
					}
				}
				for _, p := range sp.PartyNames() {
					for _, f := range []string{keyring.PaillierShareFile, keyring.LatticeShareFile} {
						if _, err := os.Stat(filepath.Join(dirs[p], f)); !errors.Is(err, os.ErrNotExist) {
							t.Errorf("%s has %s: %v", p, f, err)
						}
					}
				}
				t.Log(err)
			})
		}
	}
}
