package secureagg

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// TestLatticeLeakage checks one party's outgoing messages on the lattice
// backend against the leakage profile, as a leaf (twice) and as the root:
// only ciphertexts (its subtree's sum up; as the root, the total's
// components down), decryption shares, the public result and control
// (a sketch key, the root's share requests; a child of the root's
// sketches count as ciphertexts) leave it, each
// with the step's ids; no body holds its input in any plain encoding (as
// 64-bit integers in either byte order, as float64 bits, or as the packed
// plaintext coefficients), and two runs on the same input send different
// ciphertexts.
func TestLatticeLeakage(t *testing.T) {
	t.Parallel()
	c, keys := latticeConsortium(t, 5)
	in := testInputs(c, 40)
	const who = "org03"
	var needles [][]byte
	for _, x := range in[who] {
		v := int64(math.Round(math.Ldexp(x, 16)))
		if v == 0 {
			continue
		}
		needles = append(needles, binary.LittleEndian.AppendUint64(nil, uint64(v)), binary.BigEndian.AppendUint64(nil, uint64(v)),
			binary.BigEndian.AppendUint64(nil, math.Float64bits(x)), binary.LittleEndian.AppendUint64(nil, math.Float64bits(x)))
	}
	params, err := lattice.NewParams(lattice.ParamsBGV13)
	if err != nil {
		t.Fatal(err)
	}
	l, err := lattice.NewLayout(params, 40, 16, 40, 5)
	if err != nil {
		t.Fatal(err)
	}
	packed, err := l.EncodeFloats(in[who])
	if err != nil {
		t.Fatal(err)
	}
	for _, coeff := range packed {
		if coeff > 1<<16 {
			needles = append(needles, binary.LittleEndian.AppendUint64(nil, coeff))
		}
	}
	allowed := map[string]wire.Disclosure{
		TypeUp: wire.DiscloseCiphertext, TypeDown: wire.DiscloseCiphertext,
		TypeShare: wire.DiscloseDecryptionShare, TypeResult: wire.DisclosePublicResult,
		TypeSeed: wire.DiscloseControl, TypeShareRequest: wire.DiscloseControl,
		TypeCommit: wire.DiscloseControl, TypeSketch: wire.DiscloseCiphertext,
		TypeFormed: wire.DiscloseControl,
	}
	var first []byte
	for run, root := range []string{"org01", "org01", who} {
		net := jobtest.NewNetwork(c.names...)
		net.Capture(who)
		step := testStep(c, "org01")
		if root == who { // org02 coordinates org02 … org05: who is the root
			step = coordinatedBy(c, "org02")
			step.Parties = c.names[1:]
		}
		outs := runAll(t, net, step, func(n string) Config { return latticeConfig(keys, n) }, in)
		if outs[who].err != nil {
			t.Fatal(outs[who].err)
		}
		sent := net.Captured(who)
		if len(sent) == 0 {
			t.Fatal("nothing captured")
		}
		for _, s := range sent {
			m := s.Message
			if d, ok := allowed[m.Type]; !ok || (d != s.Disclosure && s.Disclosure != wire.DiscloseControl) {
				t.Fatalf("%s sent %s with disclosure %q", who, m.Type, s.Disclosure)
			}
			if root != who && (m.Type == TypeDown || m.Type == TypeResult || m.Type == TypeShareRequest) {
				t.Fatalf("leaf %s sent %s", who, m.Type)
			}
			if m.Job != "job-1" || m.Phase != "sum" || m.Round != 3 || m.Attempt != 1 {
				t.Fatalf("message without the step's ids: %v", m)
			}
			if m.Type == TypeResult {
				continue // the public result is everyone's output, not who's input
			}
			for _, nd := range needles {
				if bytes.Contains(m.Body, nd) {
					t.Fatalf("%s body contains an encoding of an input (%x)", m.Type, nd)
				}
			}
			if m.Type == TypeUp && run < 2 {
				if run == 0 {
					first = m.Body
				} else if bytes.Equal(m.Body, first) {
					t.Fatal("two runs on the same input sent equal ciphertexts: encryption is not randomised")
				}
			}
		}
	}
}
