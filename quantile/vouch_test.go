package quantile

import (
	"slices"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/secureagg"
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
	d, err := decide(outcome(map[string][]byte{"a": good, "b": good, "c": good}), 2)
	if err != nil || !slices.Equal(d.Counts, counts) || !slices.Equal(d.Vouched, parties) {
		t.Errorf("all agree: %+v, %v", d, err)
	}
	d, err = decide(outcome(map[string][]byte{"a": good, "c": good}), 2)
	if err != nil || !slices.Equal(d.Vouched, []string{"a", "c"}) {
		t.Errorf("b received none: %+v, %v", d, err)
	}
	other := countsDigest(step, []int64{3, 8})
	if _, err := decide(outcome(map[string][]byte{"a": good, "b": other, "c": good}), 2); err == nil ||
		!strings.Contains(err.Error(), "b received other pooled counts than the root a reported") {
		t.Errorf("b received other counts: %v", err)
	}
	if next := countsDigest(job.Step{Job: "job-1", Phase: count.Phase, Round: 2}, counts); slices.Equal(next, good) {
		t.Error("the digest does not bind the round")
	}
}
