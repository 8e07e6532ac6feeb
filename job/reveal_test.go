package job

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// seedVectors are the known answers of testdata/joint-seed.json, computed
// apart from this package by testdata/joint-seed.py (Python's hashlib).
type seedVectors struct {
	Cases []struct {
		Job     string `json:"job"`
		Round   int    `json:"round"`
		Parties []struct {
			Party        string `json:"party"`
			Contribution string `json:"contribution"`
			Commitment   string `json:"commitment"`
		} `json:"parties"`
		Seed string `json:"seed"`
	} `json:"cases"`
}

func unhex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestJointSeedVectors: the commitments and the fold give the known
// answers.
func TestJointSeedVectors(t *testing.T) {
	b, err := os.ReadFile("testdata/joint-seed.json")
	if err != nil {
		t.Fatal(err)
	}
	var v seedVectors
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Cases) == 0 {
		t.Fatal("no vectors")
	}
	for _, c := range v.Cases {
		var names []string
		for _, p := range c.Parties {
			names = append(names, p.Party)
		}
		js := NewJointSeed(c.Job, c.Round, names)
		var com SeedCommitments
		var ops SeedOpenings
		for _, p := range c.Parties {
			var k Contribution
			copy(k[:], unhex(t, p.Contribution))
			cm := js.Commit(p.Party, k)
			if hex.EncodeToString(cm.Digest) != p.Commitment {
				t.Errorf("%s/%d: %s's commitment %x, want %s", c.Job, c.Round, p.Party, cm.Digest, p.Commitment)
			}
			com.Commitments = append(com.Commitments, cm)
			ops.Openings = append(ops.Openings, js.Open(p.Party, k))
		}
		seed, err := js.Fold(com, ops)
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(seed) != c.Seed {
			t.Errorf("%s/%d: seed %x, want %s", c.Job, c.Round, seed, c.Seed)
		}
	}
}

// draw makes a draw over ann, bob and cat with fixed contributions.
func draw(t testing.TB) (JointSeed, map[string]Contribution, SeedCommitments, SeedOpenings) {
	t.Helper()
	js := NewJointSeed("job-1", 0, []string{"cat", "ann", "bob"})
	cs := map[string]Contribution{}
	var com SeedCommitments
	var ops SeedOpenings
	for i, p := range js.Parties {
		var c Contribution
		for k := range c {
			c[k] = byte(0xa0 + 16*i + k)
		}
		cs[p] = c
		com.Commitments = append(com.Commitments, js.Commit(p, c))
		ops.Openings = append(ops.Openings, js.Open(p, c))
	}
	return js, cs, com, ops
}

// noValue fails when err's text holds any contribution or commitment, raw
// or in hex.
func noValue(t *testing.T, err error, cs map[string]Contribution, com SeedCommitments) {
	t.Helper()
	var values [][]byte
	for _, c := range cs {
		values = append(values, bytes.Clone(c[:]))
	}
	for _, c := range com.Commitments {
		values = append(values, c.Digest)
	}
	for _, v := range values {
		for _, s := range []string{string(v), hex.EncodeToString(v), hex.EncodeToString(v[:4])} {
			if strings.Contains(err.Error(), s) {
				t.Fatalf("the error holds a value: %v", err)
			}
		}
	}
}

// A tampered opening is refused by the fold and by the coordinator's
// decision, naming its party and no value; so is a missing one.
func TestJointSeedTamperedOpening(t *testing.T) {
	js, cs, com, ops := draw(t)
	if _, err := js.Fold(com, ops); err != nil {
		t.Fatal(err)
	}
	bad := SeedOpenings{Openings: append([]SeedOpening(nil), ops.Openings...)}
	bad.Openings[1].Contribution = bytes.Clone(bad.Openings[1].Contribution)
	bad.Openings[1].Contribution[7] ^= 1
	_, err := js.Fold(com, bad)
	if !errors.Is(err, ErrSeedOpening) || !strings.Contains(err.Error(), "party bob") {
		t.Fatalf("fold of a tampered opening: %v, want one naming bob", err)
	}
	noValue(t, err, cs, com)

	o := &Outcome[SeedOpening]{Results: map[string]SeedOpening{}, Failed: map[string]string{}}
	for _, op := range bad.Openings {
		o.Results[op.Party] = op
	}
	_, err = js.decideReveal(com, o)
	if !errors.Is(err, ErrSeedOpening) || !strings.Contains(err.Error(), "party bob") {
		t.Fatalf("the coordinator took a tampered opening: %v", err)
	}
	noValue(t, err, cs, com)

	short := SeedOpenings{Openings: ops.Openings[:2]}
	if _, err := js.Fold(com, short); !errors.Is(err, ErrSeedParties) || !strings.Contains(err.Error(), "party cat") {
		t.Fatalf("fold without cat's opening: %v", err)
	}
	swapped := SeedOpenings{Openings: []SeedOpening{ops.Openings[1], ops.Openings[0], ops.Openings[2]}}
	if _, err := js.Fold(com, swapped); !errors.Is(err, ErrSeedParties) {
		t.Fatalf("fold of openings out of order: %v", err)
	}
	// An opening in another party's name: bob's contribution as ann's.
	stolen := SeedOpenings{Openings: append([]SeedOpening(nil), ops.Openings...)}
	stolen.Openings[0].Contribution = ops.Openings[1].Contribution
	if _, err := js.Fold(com, stolen); !errors.Is(err, ErrSeedOpening) || !strings.Contains(err.Error(), "party ann") {
		t.Fatalf("fold of bob's contribution opened as ann's: %v", err)
	}
}

// The seed depends on every party's contribution, the job and the round.
func TestJointSeedBinds(t *testing.T) {
	js, _, com, ops := draw(t)
	seed, _ := js.Fold(com, ops)
	other := js
	other.Round = 1
	if c := other.Commit("ann", Contribution{}); bytes.Equal(c.Digest, js.Commit("ann", Contribution{}).Digest) {
		t.Fatal("a commitment of round 0 is one of round 1")
	}
	if c := js.Commit("bob", Contribution{}); bytes.Equal(c.Digest, js.Commit("ann", Contribution{}).Digest) {
		t.Fatal("ann's commitment is bob's")
	}
	for i := range ops.Openings {
		js2, _, com2, ops2 := draw(t)
		ops2.Openings[i].Contribution[0] ^= 1
		com2.Commitments[i].Digest = js2.digest(ops2.Openings[i].Party, ops2.Openings[i].Contribution)
		s2, err := js2.Fold(com2, ops2)
		if err != nil || bytes.Equal(s2, seed) {
			t.Fatalf("party %d's contribution does not change the seed (%v)", i, err)
		}
	}
}

// memSecrets is a party's Secrets in memory.
type memSecrets map[string][]byte

func (m memSecrets) ReadSecret(name string) ([]byte, error) {
	b, ok := m[name]
	if !ok {
		return nil, os.ErrNotExist
	}
	return bytes.Clone(b), nil
}

func (m memSecrets) WriteSecret(name string, b []byte) error {
	m[name] = bytes.Clone(b)
	return nil
}

func (m memSecrets) Parsed([]string, func([][]byte) (any, error)) (any, error) {
	return nil, errors.New("not here")
}

// seedParty is the part of a Participant that a draw uses.
type seedParty struct {
	Participant
	self string
	hist []*Record
	sec  memSecrets
}

func (p *seedParty) Self() string         { return p.self }
func (p *seedParty) History() []*Record   { return p.hist }
func (p *seedParty) Secrets() Secrets     { return p.sec }
func (p *seedParty) JobID() string        { return "job-1" }
func (p *seedParty) reset(recs []*Record) { p.hist = recs }

func seedStep(js JointSeed, phase string) Step {
	return Step{Job: js.Job, Phase: phase, Round: js.Round, Attempt: 1, Parties: js.Parties, Coordinator: "hub", Args: []byte{0x80}}
}

func record[D any](t testing.TB, step Step, d D) *Record {
	t.Helper()
	b, err := wire.Marshal(&d)
	if err != nil {
		t.Fatal(err)
	}
	return &Record{Step: step, Coordinator: step.Coordinator, Decision: b}
}

// commitAll has every party of js commit through Serve and returns their
// sessions and commitments.
func commitAll(t *testing.T, js JointSeed) (map[string]*seedParty, SeedCommitments) {
	t.Helper()
	parties := map[string]*seedParty{}
	var com SeedCommitments
	for _, name := range js.Parties {
		p := &seedParty{self: name, sec: memSecrets{}}
		parties[name] = p
		b, err := js.Serve(p, seedStep(js, PhaseSeedCommit))
		if err != nil {
			t.Fatal(err)
		}
		var c SeedCommitment
		if err := wire.Unmarshal(b, &c); err != nil {
			t.Fatal(err)
		}
		// A re-run attempt (after a restart: the session is new, the
		// Secrets are the node's) gets the same commitment.
		again, err := js.Serve(&seedParty{self: name, sec: p.sec}, seedStep(js, PhaseSeedCommit))
		if err != nil || !bytes.Equal(again, b) {
			t.Fatalf("%s committed twice to different contributions (%v)", name, err)
		}
		com.Commitments = append(com.Commitments, c)
	}
	return parties, com
}

// A party refuses to open unless the committed list holds its own
// commitment and every party's; it names the coordinator and no value.
// Once the openings are committed, every party folds the same seed; a
// party whose commitment and opening the log replaced refuses the seed.
func TestJointSeedPartyChecks(t *testing.T) {
	js := NewJointSeed("job-1", 0, []string{"ann", "bob", "cat"})
	parties, com := commitAll(t, js)
	ann := parties["ann"]
	cs := map[string]Contribution{}
	for name, p := range parties {
		var c Contribution
		copy(c[:], p.sec[js.contributionName()])
		cs[name] = c
	}
	comStep := seedStep(js, PhaseSeedCommit)
	forged := SeedCommitments{Commitments: append([]SeedCommitment(nil), com.Commitments...)}
	forged.Commitments[0] = js.Commit("ann", Contribution{1})
	for name, d := range map[string]SeedCommitments{
		"forged":  forged,
		"missing": {Commitments: com.Commitments[1:]},
		"bob's":   {Commitments: []SeedCommitment{{Party: "ann", Digest: com.Commitments[1].Digest}, com.Commitments[1], com.Commitments[2]}},
	} {
		ann.reset([]*Record{record(t, comStep, d)})
		_, err := js.Serve(ann, seedStep(js, PhaseSeedReveal))
		if err == nil || !strings.Contains(err.Error(), "party ann refuses seed-reveal round 0") || !strings.Contains(err.Error(), "coordinator hub") {
			t.Fatalf("%s list: ann opened: %v", name, err)
		}
		if name != "missing" && !errors.Is(err, ErrSeedNotOwn) {
			t.Fatalf("%s list: %v, want ErrSeedNotOwn", name, err)
		}
		noValue(t, err, cs, com)
	}
	// Before the commitments are in the log: refused.
	ann.reset(nil)
	if _, err := js.Serve(ann, seedStep(js, PhaseSeedReveal)); err == nil {
		t.Fatal("ann opened before any commitment was committed")
	}

	var ops SeedOpenings
	for _, name := range js.Parties {
		p := parties[name]
		p.reset([]*Record{record(t, comStep, com)})
		b, err := js.Serve(p, seedStep(js, PhaseSeedReveal))
		if err != nil {
			t.Fatal(err)
		}
		var op SeedOpening
		if err := wire.Unmarshal(b, &op); err != nil {
			t.Fatal(err)
		}
		ops.Openings = append(ops.Openings, op)
	}
	want, err := js.Fold(com, ops)
	if err != nil {
		t.Fatal(err)
	}
	revStep := seedStep(js, PhaseSeedReveal)
	for _, p := range parties {
		p.reset([]*Record{record(t, comStep, com), record(t, revStep, ops)})
		got, err := js.Seed(p)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s folds %x (%v), the coordinator %x", p.self, got, err, want)
		}
		if _, err := js.Serve(p, comStep); err == nil {
			t.Fatalf("%s committed again after the draw", p.self)
		}
		if _, err := js.Serve(p, revStep); err == nil {
			t.Fatalf("%s opened again after the draw", p.self)
		}
	}
	// A log whose commitment and opening in ann's name are not ann's
	// (consistent with each other): every other party's check passes, ann
	// refuses.
	fake := Contribution{9}
	com2 := SeedCommitments{Commitments: append([]SeedCommitment(nil), com.Commitments...)}
	ops2 := SeedOpenings{Openings: append([]SeedOpening(nil), ops.Openings...)}
	com2.Commitments[0], ops2.Openings[0] = js.Commit("ann", fake), js.Open("ann", fake)
	ann.reset([]*Record{record(t, comStep, com2), record(t, revStep, ops2)})
	if _, err := js.Seed(ann); !errors.Is(err, ErrSeedNotOwn) || !strings.Contains(err.Error(), "party ann") {
		t.Fatalf("ann took a seed without its contribution: %v", err)
	}
	// A tampered opening in the log: every party refuses the seed.
	ops3 := SeedOpenings{Openings: append([]SeedOpening(nil), ops.Openings...)}
	ops3.Openings[2] = js.Open("cat", Contribution{7})
	bob := parties["bob"]
	bob.reset([]*Record{record(t, comStep, com), record(t, revStep, ops3)})
	if _, err := js.Seed(bob); !errors.Is(err, ErrSeedOpening) || !strings.Contains(err.Error(), "party cat") {
		t.Fatalf("bob took a seed with cat's opening tampered: %v", err)
	}
	// A step of another round, or over other parties: refused.
	other := seedStep(js, PhaseSeedCommit)
	other.Round = 1
	if _, err := js.Serve(&seedParty{self: "ann", sec: memSecrets{}}, other); err == nil {
		t.Fatal("ann committed in another round")
	}
	other = seedStep(js, PhaseSeedCommit)
	other.Parties = []string{"ann", "bob"}
	if _, err := js.Serve(&seedParty{self: "ann", sec: memSecrets{}}, other); err == nil {
		t.Fatal("ann committed in a draw without cat")
	}
}

// outcomeOf decodes raw party outputs as Round.decode does.
func outcomeOf[O any](outs map[string][]byte) *Outcome[O] {
	o := &Outcome[O]{Results: map[string]O{}, Failed: map[string]string{}}
	for p, b := range outs {
		var v O
		if err := wire.Unmarshal(b, &v); err != nil {
			o.Failed[p] = err.Error()
			continue
		}
		o.Results[p] = v
	}
	return o
}

// FuzzSeedCommitment: the coordinator's reading of a party's commitment
// and a party's reading of the committed list never panic, and accept only
// a list of every party's commitment of SHA-256's size.
func FuzzSeedCommitment(f *testing.F) {
	js, _, com, _ := draw(f)
	good, _ := wire.Marshal(&com.Commitments[0])
	list, _ := wire.Marshal(&com)
	f.Add(good, list)
	f.Add([]byte{0x82, 0xa5}, []byte{0x81})
	f.Fuzz(func(t *testing.T, out, decision []byte) {
		outs := map[string][]byte{"ann": out}
		for _, c := range com.Commitments[1:] {
			outs[c.Party], _ = wire.Marshal(&c)
		}
		if d, err := js.decideCommit(outcomeOf[SeedCommitment](outs)); err == nil {
			if d.Commitments[0].Party != "ann" || len(d.Commitments[0].Digest) != 32 {
				t.Fatalf("accepted %x as ann's commitment", out)
			}
		}
		rec := &Record{Step: Step{Phase: PhaseSeedCommit, Parties: js.Parties}, Decision: decision}
		if d, err := js.committed([]*Record{rec}); err == nil {
			if len(d.Commitments) != 3 {
				t.Fatalf("accepted a list of %d commitments", len(d.Commitments))
			}
		}
	})
}

// FuzzSeedOpening: the coordinator's reading of a party's opening and a
// party's fold of the committed openings never panic, and accept only the
// contributions the commitments bind.
func FuzzSeedOpening(f *testing.F) {
	js, _, com, ops := draw(f)
	want, _ := js.Fold(com, ops)
	good, _ := wire.Marshal(&ops.Openings[0])
	list, _ := wire.Marshal(&ops)
	f.Add(good, list)
	f.Add([]byte{0x82, 0xa5}, []byte{0x91, 0xc0})
	f.Fuzz(func(t *testing.T, out, decision []byte) {
		outs := map[string][]byte{"ann": out}
		for _, op := range ops.Openings[1:] {
			outs[op.Party], _ = wire.Marshal(&op)
		}
		if d, err := js.decideReveal(com, outcomeOf[SeedOpening](outs)); err == nil {
			if !bytes.Equal(d.Openings[0].Contribution, ops.Openings[0].Contribution) {
				t.Fatalf("accepted %x as ann's opening", out)
			}
		}
		rec := &Record{Step: Step{Phase: PhaseSeedReveal, Parties: js.Parties}, Decision: decision}
		d, err := one(js, seedRevealRound, []*Record{rec})
		if err != nil {
			return
		}
		if seed, err := js.Fold(com, d); err == nil && !bytes.Equal(seed, want) {
			t.Fatalf("folded %x from %x, want %x", seed, decision, want)
		}
	})
}
