package integrate

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// evilCoordinator runs the schema and the alignment honestly, then its own
// rounds: a coordinator that tries to extract what the log does not
// determine. The parties run the honest sessions (Open is Kind's).
type evilCoordinator struct {
	Kind
	// owner, when set, is committed as the sensitive column's owner.
	owner  string
	rounds func(ctx context.Context, co *coordinator, sd schemaDecision) error
}

func (k evilCoordinator) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	co := &coordinator{c: c, prm: prm, parties: c.Spec().PartyNames()}
	if k.owner == "" {
		sd, _, err := co.prepare(ctx)
		if err != nil {
			return nil, err
		}
		return nil, k.rounds(ctx, co, sd)
	}
	sd, err := run(ctx, co, schemaRound, 0, co.parties, none{}, func(o *job.Outcome[schemaOutput]) (schemaDecision, error) {
		d, err := decideSchema(o, co.parties, co.prm)
		d.SensitiveOwner = k.owner
		return d, err
	})
	if err == nil {
		_, err = run(ctx, co, alignRound, 0, co.parties, none{}, func(o *job.Outcome[alignOutput]) (alignDecision, error) { return decideAlign(o, co.parties, co.prm) })
	}
	if err != nil {
		return nil, err
	}
	return nil, k.rounds(ctx, co, sd)
}

// scores runs a TDS score round honestly and returns the committed
// winner and every party's candidate (which only the coordinator sees).
func scores(ctx context.Context, co *coordinator, sd schemaDecision, round int) (winner, map[string]scoreOutput, error) {
	var cands map[string]scoreOutput
	w, err := run(ctx, co, scoreRound, round, co.parties, none{}, func(o *job.Outcome[scoreOutput]) (winner, error) {
		cands = o.Results
		return decideScore(o, co.parties, sd.Attrs)
	})
	return w, cands, err
}

// proposals runs a Mondrian propose round with the given fold (on the
// state of round 0) and
// returns the committed choices and every party's proposals.
func proposals(ctx context.Context, co *coordinator, sd schemaDecision, round int, forge func(cutChoices, map[string]proposeOutput) cutChoices) (cutChoices, error) {
	return run(ctx, co, proposeRound, round, co.parties, none{}, func(o *job.Outcome[proposeOutput]) (cutChoices, error) {
		ch, err := decideProposals(o, co.parties, sd.Attrs, anonymize.NewMondrianState(200))
		return forge(ch, o.Results), err
	})
}

func honest(ch cutChoices, _ map[string]proposeOutput) cutChoices { return ch }

// A coordinator may not make a party compute on its own data anything the
// log and the spec do not determine: each case is refused by the party it
// targets (or every party that can tell), whose refusal names the
// coordinator, and the refusing party sends nothing of its data in the
// refused step (no output reaches the coordinator; only the runtime's
// control message carrying the refusal).
func TestCoordinatorCannotExtract(t *testing.T) {
	t.Parallel()
	for _, c := range extractionCases {
		t.Run(c.name, func(t *testing.T) { checkExtractionRefused(t, c) })
	}
}

// evilRounds builds an evil coordinator's rounds for one case; the rounds
// set *victims to the parties that must refuse the last step, given what
// the honest parts of the run committed.
type evilRounds func(t *testing.T, victims *[]string) func(ctx context.Context, co *coordinator, sd schemaDecision) error

// extractionCase is one way TestCoordinatorCannotExtract's coordinator
// tries to extract what the log does not determine.
type extractionCase struct {
	name, algorithm string
	// private gives west a sensitive column no other party holds;
	// owner names another owner in the committed schema
	private bool
	owner   string
	rounds  evilRounds
	// why is what each victim's refusal must say.
	why string
}

var extractionCases = []extractionCase{
	{name: "split-although-another-won", algorithm: algTDS, why: "although party", rounds: splitAlthoughAnotherWon},
	{name: "split-a-node-the-winner-did-not-propose", algorithm: algTDS, why: "did not propose", rounds: splitUnproposedNode},
	// the winner finds the split is not its own, every other party that
	// it leaves a class of one record
	{name: "commit-a-split-that-singles-out-a-record", algorithm: algTDS, why: "refuses split round 0, which coordinator south committed",
		rounds: commitSingletonSplit},
	{name: "publish-before-the-rounds-end", algorithm: algTDS, why: "where the log determines split round 0", rounds: publishEarly},
	{name: "cut-a-group-the-log-does-not-hold", algorithm: algMondrian, why: "did not propose", rounds: cutUnheldGroup},
	{name: "commit-a-cut-that-singles-out-a-record", algorithm: algMondrian, why: "refuses cut round 0, which coordinator south committed",
		rounds: commitSingletonCut},
	{name: "commit-answers-the-sensitive-owner-did-not-give", algorithm: algMondrian, private: true,
		why: "refuses cut round 0, which coordinator south committed", rounds: forgeCheckAnswers},
	{name: "name-another-sensitive-owner", algorithm: algMondrian, private: true, owner: "north",
		why: "refuses the schema coordinator south committed", rounds: proposeUnderAnotherOwner},
	{name: "cut-although-another-was-chosen", algorithm: algMondrian, why: "where the log determines cut round 0", rounds: cutByAnother},
}

// checkExtractionRefused runs c's evil coordinator (south) over a random
// five-attribute job and checks that the job fails at the last step, each
// victim's refusal names the coordinator and says c.why, and no victim
// reported an output of, or sent anything but control in, the refused step.
func checkExtractionRefused(t *testing.T, c extractionCase) {
	// every attribute in a QID, so that every party can check k on any split
	reqs := []anonymize.Requirement{{QID: []string{"noa", "soa", "wea"}, K: 5}, {QID: []string{"nob", "sob", "web"}, K: 4}}
	extra := "  algorithm: " + c.algorithm + "\n"
	if c.private {
		extra += "  sensitive: disease\n  l: 3\n"
	}
	j := randomJob(t, 5, 200, reqs, extra)
	if c.private {
		j = withDisease(t, j)
	}
	var victims []string
	rep, err := j.runKind(t, evilCoordinator{owner: c.owner, rounds: c.rounds(t, &victims)}, jobtest.Options{Leader: "south"})
	if err == nil {
		t.Fatal("the job did not fail")
	}
	recs := rep.Records()
	last := recs[len(recs)-1]
	if last.Error == "" || len(victims) == 0 {
		t.Fatalf("the last step %s/%d did not fail (victims %v): %v", last.Step.Phase, last.Step.Round, victims, err)
	}
	for _, p := range victims {
		why := last.Failed[p]
		if !strings.Contains(why, "party "+p+" refuses") || !strings.Contains(why, "coordinator south") || !strings.Contains(why, c.why) {
			t.Errorf("%s: %q, want a refusal naming the coordinator and saying %q", p, why, c.why)
		}
	}
	for _, o := range rep.Outputs {
		if o.Step.Phase == last.Step.Phase && o.Step.Round == last.Step.Round && slices.Contains(victims, o.Party) {
			t.Errorf("%s reported an output of the refused step %s/%d", o.Party, o.Step.Phase, o.Step.Round)
		}
	}
	for _, s := range rep.Sent {
		if s.Message.Phase == last.Step.Phase && s.Message.Round == last.Step.Round && slices.Contains(victims, s.From) && s.Disclosure != wire.DiscloseControl {
			t.Errorf("%s sent %s disclosing %q in the refused step", s.From, s.Message.Type, s.Disclosure)
		}
	}
	t.Logf("%s", last.Failed[victims[0]])
}

// splitAlthoughAnotherWon asks a losing party to split on its own
// candidate, from the loser alone.
func splitAlthoughAnotherWon(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		w, cands, err := scores(ctx, co, sd, 0)
		if err != nil {
			return err
		}
		for _, p := range co.parties {
			if c := cands[p]; p != w.Party && c.Found {
				// the loser's own candidate, from the loser alone
				*victims = []string{p}
				_, err := run(ctx, co, splitRound, 0, []string{p}, splitArgs{Attr: c.Attr, Node: c.Node}, func(o *job.Outcome[Split]) (Split, error) {
					return decideSplit(o, winner{Found: true, Party: p, Attr: c.Attr, Node: c.Node})
				})
				return err
			}
		}
		t.Fatal("test data: no losing party had a candidate")
		return nil
	}
}

// splitUnproposedNode commits as p's winning candidate the root of p's
// other attribute: its values there, which no score chose.
func splitUnproposedNode(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		// commit as p's winning candidate the root of p's other
		// attribute: its values there, which no score chose
		var forged winner
		_, err := run(ctx, co, scoreRound, 0, co.parties, none{}, func(o *job.Outcome[scoreOutput]) (winner, error) {
			p := co.parties[0]
			for a, at := range sd.Attrs {
				if at.Owner == p && (!o.Results[p].Found || o.Results[p].Attr != a) {
					forged = winner{Found: true, Party: p, Attr: a, Node: 0}
				}
			}
			return forged, nil
		})
		if err != nil {
			return err
		}
		*victims = []string{forged.Party}
		_, err = run(ctx, co, splitRound, 0, []string{forged.Party}, splitArgs{Attr: forged.Attr, Node: forged.Node}, func(o *job.Outcome[Split]) (Split, error) {
			return decideSplit(o, forged)
		})
		return err
	}
}

// commitSingletonSplit commits the winner's split with its first record
// moved alone to another child, then asks everyone to score on.
func commitSingletonSplit(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		w, _, err := scores(ctx, co, sd, 0)
		if err != nil {
			return err
		}
		// the winner's split, committed with its first record
		// moved alone to another child
		if _, err := run(ctx, co, splitRound, 0, []string{w.Party}, splitArgs{Attr: w.Attr, Node: w.Node}, func(o *job.Outcome[Split]) (Split, error) {
			s, err := decideSplit(o, w)
			for i := range s.Child {
				s.Child[i] = 0
			}
			s.Child[0] = 1
			return s, err
		}); err != nil {
			return err
		}
		*victims = co.parties
		_, _, err = scores(ctx, co, sd, 1)
		return err
	}
}

// publishEarly asks for the publication after a score round whose split
// never came.
func publishEarly(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		if _, _, err := scores(ctx, co, sd, 0); err != nil {
			return err
		}
		*victims = co.parties
		_, err := run(ctx, co, publishRound, 0, co.parties, none{}, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
			return publishDecision{}, o.Err()
		})
		return err
	}
}

// cutUnheldGroup commits a cut of group 1 where round 0 holds one group.
func cutUnheldGroup(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		ch, err := proposals(ctx, co, sd, 0, func(ch cutChoices, _ map[string]proposeOutput) cutChoices {
			ch.Choices[0].Group = 1 // round 0 holds one group
			return ch
		})
		if err != nil {
			return err
		}
		*victims = ch.cutters()
		_, err = run(ctx, co, cutRound, 0, ch.cutters(), ch, func(o *job.Outcome[cutOutput]) (cutDecision, error) {
			return cutDecision{}, o.Err()
		})
		return err
	}
}

// commitSingletonCut commits the owner's cut with the group's first record
// alone in a part (the publication would show its values), then asks
// everyone to propose on.
func commitSingletonCut(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		ch, err := proposals(ctx, co, sd, 0, honest)
		if err != nil {
			return err
		}
		// the owner's cut, committed with the group's first
		// record alone in a part (the publication would show
		// its values)
		if _, err := run(ctx, co, cutRound, 0, ch.cutters(), ch, func(o *job.Outcome[cutOutput]) (cutDecision, error) {
			d, err := decideCuts(o, ch, anonymize.NewMondrianState(200))
			w := &d.Cuts[0]
			for i := range w.Part {
				w.Part[i] = 0
			}
			w.Part[0] = 1
			return d, err
		}); err != nil {
			return err
		}
		*victims = co.parties
		_, err = proposals(ctx, co, sd, 1, honest)
		return err
	}
}

// forgeCheckAnswers commits every answer of west's diversity check turned
// round, then asks everyone to propose on.
func forgeCheckAnswers(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		ch, err := proposals(ctx, co, sd, 0, honest)
		if err != nil {
			return err
		}
		cd, err := run(ctx, co, cutRound, 0, ch.cutters(), ch, func(o *job.Outcome[cutOutput]) (cutDecision, error) {
			return decideCuts(o, ch, anonymize.NewMondrianState(200))
		})
		if err != nil {
			return err
		}
		// every answer of west's turned round (a refused cut
		// accepted would publish a group its column does not
		// make diverse)
		if _, err := run(ctx, co, checkRound, 0, []string{"west"}, none{}, func(o *job.Outcome[checkOutput]) (checkDecision, error) {
			d, err := decideCheck(o, "west", len(cd.Cuts))
			for i := range d.OK {
				d.OK[i] = !d.OK[i]
			}
			return d, err
		}); err != nil {
			return err
		}
		*victims = []string{"west"}
		_, err = proposals(ctx, co, sd, 1, honest)
		return err
	}
}

// proposeUnderAnotherOwner asks for proposals under the schema the evil
// coordinator committed with north as the sensitive column's owner.
func proposeUnderAnotherOwner(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		*victims = []string{"north", "west"} // north holds no disease, west is not named
		_, err := proposals(ctx, co, sd, 0, honest)
		return err
	}
}

// cutByAnother asks a party the proposals did not choose to cut.
func cutByAnother(t *testing.T, victims *[]string) func(context.Context, *coordinator, schemaDecision) error {
	return func(ctx context.Context, co *coordinator, sd schemaDecision) error {
		ch, err := proposals(ctx, co, sd, 0, honest)
		if err != nil {
			return err
		}
		other := slices.DeleteFunc(slices.Clone(co.parties), func(p string) bool { return slices.Contains(ch.cutters(), p) })[0]
		*victims = []string{other}
		_, err = run(ctx, co, cutRound, 0, []string{other}, ch, func(o *job.Outcome[cutOutput]) (cutDecision, error) {
			return cutDecision{}, o.Err()
		})
		return err
	}
}
