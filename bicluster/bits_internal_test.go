package bicluster

import (
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// withScratch is a participant with a history, a job id and a data dir.
type withScratch struct {
	histOnly
	secrets job.Secrets
}

func (p withScratch) JobID() string        { return "job-7" }
func (p withScratch) Secrets() job.Secrets { return p.secrets }

// TestBitsChecked: a party compares every committed merge test round's
// bits with those it kept of the round's decryption, in its session and,
// after a restart, in its scratch; a difference, or no bits kept, is a
// refusal naming the coordinator that committed them and the round, never
// a bit.
func TestBitsChecked(t *testing.T) {
	t.Parallel()
	committed := func(bits []bool) []*job.Record {
		d, err := wire.Marshal(testDecision{Similar: bits})
		if err != nil {
			t.Fatal(err)
		}
		return []*job.Record{{Step: job.Step{Phase: pairTestRound.Phase, Round: 0, Parties: []string{"org01", "org02", "org03"}, Coordinator: "org03"},
			Coordinator: "org03", Decision: d}}
	}
	secrets := job.DirSecrets(t.TempDir())
	open := func(hist []*job.Record) *session {
		return &session{p: withScratch{histOnly: histOnly{hist: hist}, secrets: secrets}}
	}
	merge := job.Step{Phase: mergeRound.Phase, Coordinator: "org03"}
	kept := []bool{true, false, true}
	s := open(committed(kept))
	if err := s.checkBits(merge); err == nil || !strings.Contains(err.Error(), "keeps no bits of merge test round 0") {
		t.Fatalf("no bits kept: %v", err)
	}
	if err := s.keepBits(job.Step{Phase: pairTestRound.Phase, Round: 0}, kept); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		s       *session
		refused bool
	}{
		{"the same bits", open(committed(kept)), false},
		{"forged bits", open(committed([]bool{true, true, true})), true},
		{"fewer bits", open(committed([]bool{true, false})), true},
	} {
		// A fresh session reads them from its scratch, as after a
		// restart; then from itself.
		for range 2 {
			err := c.s.checkBits(merge)
			if !c.refused {
				if err != nil {
					t.Errorf("%s: %v", c.name, err)
				}
				continue
			}
			if err == nil || !strings.Contains(err.Error(), "party org02 refuses merge round 0: coordinator org03 committed bits of merge test round 0") {
				t.Errorf("%s: %v", c.name, err)
			} else if strings.Contains(err.Error(), "true") || strings.Contains(err.Error(), "false") {
				t.Errorf("%s: the refusal %q names a bit", c.name, err)
			}
		}
	}
}

// TestDecodeBits: the root's bits message decodes to exactly the round's
// bits, or fails naming the root.
func TestDecodeBits(t *testing.T) {
	t.Parallel()
	enc := func(b any) []byte {
		raw, err := wire.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	if bits, err := decodeBits(enc(bitsBody{Similar: []bool{true, false}}), "org01", 2); err != nil || len(bits) != 2 || !bits[0] || bits[1] {
		t.Fatalf("good bits: %v %v", bits, err)
	}
	for name, c := range map[string]struct {
		raw       []byte
		malformed bool
	}{
		"too few":           {enc(bitsBody{Similar: []bool{true}}), true},
		"none":              {enc(bitsBody{}), true},
		"failed":            {enc(bitsBody{Failed: true}), false},
		"failed with bits":  {enc(bitsBody{Similar: []bool{true, true}, Failed: true}), true},
		"not msgpack":       {[]byte{0xc1}, false},
		"an unknown member": {enc(struct{ X int }{1}), false},
	} {
		_, err := decodeBits(c.raw, "org01", 2)
		if err == nil || !strings.Contains(err.Error(), "org01") || (c.malformed && !errors.Is(err, wire.ErrMalformed)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// FuzzDecodeBits: any body a root sends as its bits decodes to exactly
// the expected count or fails; it never panics.
func FuzzDecodeBits(f *testing.F) {
	good, _ := wire.Marshal(bitsBody{Similar: []bool{true, false, true}})
	f.Add(good)
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		if bits, err := decodeBits(b, "org01", 3); err == nil && len(bits) != 3 {
			t.Fatalf("%d bits decoded, 3 expected", len(bits))
		}
	})
}
