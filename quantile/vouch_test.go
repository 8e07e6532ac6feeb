package quantile

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// stubParticipant is the part of a job.Participant that vouch uses.
type stubParticipant struct {
	job.Participant
	self    string
	secrets job.Secrets
}

func (p stubParticipant) Self() string         { return p.self }
func (p stubParticipant) JobID() string        { return "job-1" }
func (p stubParticipant) Secrets() job.Secrets { return p.secrets }

func stubSession(self, dir string) *session {
	return &session{p: stubParticipant{self: self, secrets: jobtest.DirSecrets(dir)}, views: map[int][]int64{}}
}

// vouch's rules, one by one: a party holds the coordinator to the counts
// it received, also after a restart (they are in its job scratch); a party
// that received none is not named a voucher and needs a voucher besides
// the coordinator; vouchers are parties of the round. Refusals name the
// party, the step, the coordinator and the round, never a count.
func TestVouch(t *testing.T) {
	t.Parallel()
	parties := []string{"a", "b", "c"}
	rec := &job.Record{Step: job.Step{Job: "job-1", Phase: count.Phase, Round: 2, Parties: parties, Coordinator: "c"}, Coordinator: "c"}
	step := job.Step{Job: "job-1", Phase: count.Phase, Round: 3, Parties: parties, Coordinator: "c"}
	received := []int64{1234, 5678}
	dirA := t.TempDir()
	a := stubSession("a", dirA)
	if err := a.remember(2, received); err != nil {
		t.Fatal(err)
	}
	b := stubSession("b", t.TempDir())
	restarted := stubSession("a", dirA)
	const prefix = "refuses count round 3: coordinator c committed counts for round 2 "
	cases := []struct {
		name    string
		s       *session
		counts  []int64
		vouched []string
		want    string // "" accepts
	}{
		{"as received", a, received, []string{"a", "b"}, ""},
		{"as received, not named", a, received, []string{"b"}, ""},
		{"forged", a, []int64{1234, 5679}, []string{"a", "b", "c"}, "that differ from those the root sent it"},
		{"forged, after a restart", restarted, []int64{1234, 5679}, parties, "that differ from those the root sent it"},
		{"received none, named", b, received, []string{"a", "b"}, "as vouched for by this party, which received none"},
		{"received none, coordinator alone", b, received, []string{"c"}, "that no party but the coordinator vouched for"},
		{"received none, nobody", b, received, nil, "that no party but the coordinator vouched for"},
		{"received none, another party", b, received, []string{"a", "c"}, ""},
		{"outsider", a, received, []string{"a", "x"}, "vouched for by a member outside the round"},
	}
	for _, tc := range cases {
		err := tc.s.vouch(step, rec, &decision{Counts: tc.counts, Vouched: tc.vouched})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.want == "":
		case err == nil:
			t.Errorf("%s: accepted", tc.name)
		case !strings.Contains(err.Error(), "party "+tc.s.p.Self()+" "+prefix+tc.want):
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		case strings.Contains(err.Error(), "1234") || strings.Contains(err.Error(), "567"):
			t.Errorf("%s: %v names a count", tc.name, err)
		}
	}
}

// The coordinator commits the root's counts only when every party's
// digest of what it received matches them, and names those parties; a
// party that received other counts fails the round, named.
func TestDecideVouchers(t *testing.T) {
	t.Parallel()
	parties := []string{"a", "b", "c"}
	step := job.Step{Job: "job-1", Phase: count.Phase, Round: 1, Parties: parties, Coordinator: "c"} // root a
	counts := []int64{3, 7}
	good := countsDigest(step, counts)
	outcome := func(digests map[string][]byte) *job.Outcome[output] {
		o := &job.Outcome[output]{Step: step, Results: map[string]output{}}
		for _, p := range parties {
			so := &secureagg.Outcome{Included: parties, Formed: true}
			if p == secureagg.Root(step) {
				so.Sum = []float64{3, 7}
			}
			o.Results[p] = output{Outcome: so, Counts: digests[p]}
		}
		return o
	}
	d, err := decide(outcome(map[string][]byte{"a": good, "b": good, "c": good}), 2, &Params{})
	if err != nil || !slices.Equal(d.Counts, counts) || !slices.Equal(d.Vouched, parties) {
		t.Errorf("all agree: %+v, %v", d, err)
	}
	d, err = decide(outcome(map[string][]byte{"a": good, "c": good}), 2, &Params{})
	if err != nil || !slices.Equal(d.Vouched, []string{"a", "c"}) {
		t.Errorf("b received none: %+v, %v", d, err)
	}
	other := countsDigest(step, []int64{3, 8})
	if _, err := decide(outcome(map[string][]byte{"a": good, "b": other, "c": good}), 2, &Params{}); err == nil ||
		!strings.Contains(err.Error(), "b received other pooled counts than the root a reported") {
		t.Errorf("b received other counts: %v", err)
	}
	if next := countsDigest(job.Step{Job: "job-1", Phase: count.Phase, Round: 2}, counts); slices.Equal(next, good) {
		t.Error("the digest does not bind the round")
	}
}

// The release is published when every party allowed it, re-run while a
// party is silent or unheard, and refused, naming the party and its
// reason, when one refused.
func TestDecideRelease(t *testing.T) {
	t.Parallel()
	step := job.Step{Phase: releaseRound.Phase, Parties: []string{"a", "b", "c"}, Coordinator: "c"}
	yes := released{Allowed: true}
	all := &job.Outcome[released]{Step: step, Results: map[string]released{"a": yes, "b": yes, "c": yes}}
	if d, err := decideRelease(all); err != nil || !d.Released {
		t.Errorf("all allowed: %+v, %v", d, err)
	}
	silent := &job.Outcome[released]{Step: step, Results: map[string]released{"a": yes, "c": yes},
		Failed: map[string]string{"b": "did not answer"}, Silent: []string{"b"}}
	if d, err := decideRelease(silent); err != nil || d.Released || d.Retry["b"] == "" {
		t.Errorf("b silent: %+v, %v", d, err)
	}
	unheard := &job.Outcome[released]{Step: step, Results: map[string]released{"a": yes, "c": yes}}
	if d, err := decideRelease(unheard); err != nil || d.Released || d.Retry["b"] == "" {
		t.Errorf("b unheard: %+v, %v", d, err)
	}
	refused := &job.Outcome[released]{Step: step, Results: map[string]released{"a": yes, "c": yes},
		Failed: map[string]string{"b": "refused by b's policy: rule floors.min_k"}}
	if _, err := decideRelease(refused); err == nil || !strings.Contains(err.Error(), "floors.min_k") || !strings.Contains(err.Error(), "nothing is published") {
		t.Errorf("b refused: %v", err)
	}
}

// countingGuard allows everything and records each release it is asked.
type countingGuard struct {
	job.Guard
	releases []job.Release
}

func (g *countingGuard) Release(_ job.Step, r job.Release) error {
	g.releases = append(g.releases, r)
	return nil
}

// releaseParticipant is a party's view of a finished job for the release
// step: its history, spec, job scratch and guard.
type releaseParticipant struct {
	stubParticipant
	spec    *job.Spec
	history []*job.Record
	guard   job.Guard
}

func (p releaseParticipant) Spec() *job.Spec        { return p.spec }
func (p releaseParticipant) History() []*job.Record { return p.history }
func (p releaseParticipant) Guard() job.Guard       { return p.guard }

// A party's policy counts each value once per table in a job, before the
// count round that could finish its search (spendBeforeLast), with the
// rank and pooled row count the committed counts give; the release step
// then checks the value with the rows of its final bracket and counts it
// again only when the job scratch lost that it was counted. A re-run of the
// release step (a party silent, a new leader) answers from the job scratch
// without asking again.
func TestReleaseAsksPolicyOnce(t *testing.T) {
	t.Parallel()
	path, names := consortium(t, dense(), denseParams("0.25, 0.5"))
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	base := t.TempDir()
	secrets := dealtIn(t, base, names)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rep, err := jobtest.Run(ctx, Kind{}, spec, jobtest.Options{JobID: "job-1", Secrets: secrets, Policy: lax()})
	if err != nil {
		t.Fatal(err)
	}
	prm, err := parseParams(spec)
	if err != nil {
		t.Fatal(err)
	}
	// org01's policy allowed the values in the job's own release step; its
	// session after a restart, with that record gone but the counts it
	// received kept, asks this guard.
	self := names[0]
	scratch := filepath.Join(base, self, "jobs/job-1/quantile")
	for i := range 2 {
		if _, err := os.Stat(filepath.Join(scratch, "spent", strconv.Itoa(i))); err != nil {
			t.Errorf("quantile %d's release was not counted during the search: %v", i, err)
		}
	}
	var a releaseArgs
	for _, q := range rep.Result["quantiles"].([]Quantile) {
		a.Values = append(a.Values, q.Value)
	}
	b, err := wire.Marshal(&a)
	if err != nil {
		t.Fatal(err)
	}
	for _, lost := range []string{"released", "spent"} {
		// The session after a restart, with the record that the release
		// was allowed gone (then also that of the counting), but the counts
		// it received kept, asks this guard.
		if err := os.RemoveAll(filepath.Join(scratch, lost)); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(filepath.Join(scratch, "released")); err != nil {
			t.Fatal(err)
		}
		g := &countingGuard{}
		p := releaseParticipant{stubParticipant: stubParticipant{self: self, secrets: secrets[self]},
			spec: spec, history: rep.Records(), guard: g}
		s := &session{p: p, params: prm, tables: []tableRows{{Table: "t", Rows: 90}}, views: map[int][]int64{}}
		check := lost == "released" // counted during the search: checked, not counted
		want := []job.Release{
			{Table: "t", Column: "v", Rank: 45, Rows: 180, Bracket: 6, Searching: check},
			{Table: "t", Column: "v", Rank: 90, Rows: 180, Bracket: 6, Searching: check},
		}
		for attempt := 1; attempt <= 2; attempt++ {
			step := job.Step{Job: "job-1", Phase: releaseRound.Phase, Round: 0, Attempt: attempt, Parties: names, Coordinator: names[1], Args: b}
			out, err := s.Step(ctx, step)
			var r released
			if err != nil || wire.Unmarshal(out, &r) != nil || !r.Allowed {
				t.Fatalf("%s lost, attempt %d: %x, %v", lost, attempt, out, err)
			}
			if !slices.Equal(g.releases, want) {
				t.Errorf("%s lost, attempt %d asked the policy %+v, want %+v once", lost, attempt, g.releases, want)
			}
		}
	}
}
