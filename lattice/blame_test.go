package lattice

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"
)

// fakeKey is a public key with only what plans read.
func fakeKey(n, q int) *PublicKey { return &PublicKey{Members: names(n), Quorum: q} }

// Plans have the properties their doc promises, for every consortium size
// and quorum up to 17.
func TestPlans(t *testing.T) {
	for n := 2; n <= 17; n++ {
		for q := 1; q <= n; q++ {
			pk, avail := fakeKey(n, q), available(n)
			if _, err := PlanSingle(pk, avail); err != nil {
				t.Fatal(err)
			}
			v, err := PlanVerified(pk, avail)
			if q == n {
				if !errors.Is(err, ErrParams) {
					t.Fatalf("N=%d Q=%d: verified plan: %v", n, q, err)
				}
				continue
			}
			if err != nil || !v.Verified {
				t.Fatalf("N=%d Q=%d: verified plan %v, %v", n, q, v, err)
			}
			for _, p := range avail {
				if 2*q <= n+1 && len(v.QuorumsOf(p)) > 2 {
					t.Fatalf("N=%d Q=%d: member %d in %d quorums of the verified plan", n, q, p, len(v.QuorumsOf(p)))
				}
			}
			b, err := PlanBlame(pk, avail)
			if err != nil {
				t.Fatal(err)
			}
			for _, qu := range b.Quorums {
				if len(qu) != q || checkParties(qu, n) != nil {
					t.Fatalf("N=%d Q=%d: bad quorum %v", n, q, qu)
				}
			}
			for _, x := range avail {
				for _, y := range avail {
					if x == y {
						continue
					}
					if !slices.ContainsFunc(b.Quorums, func(qu []int) bool { return !slices.Contains(qu, x) && slices.Contains(qu, y) }) {
						t.Fatalf("N=%d Q=%d: no quorum has %d without %d", n, q, y, x)
					}
					if n >= q+2 && !slices.ContainsFunc(b.Quorums, func(qu []int) bool { return !slices.Contains(qu, x) && !slices.Contains(qu, y) }) {
						t.Fatalf("N=%d Q=%d: no quorum avoids %d and %d", n, q, x, y)
					}
				}
			}
			if n == 17 && q == DefaultQuorum(17) || n == 5 && q == 3 || n == 3 && q == 2 {
				t.Logf("N=%d Q=%d: verified %d quorums, blame %d", n, q, len(v.Quorums), len(b.Quorums))
			}
		}
	}
}

// The judge never names an honest member and never returns a wrong total
// when at most one member is faulty, however that member's shares behave in
// each quorum (an adaptive adversary: every quorum it is in may decrypt to
// anything, including the truth); and a blame plan names a member whose
// every share is wrong whenever the plan can tell it apart (N ≥ Q+2).
func TestJudgeSound(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	truth := Digest{1}
	wrong := func(i int) Digest { return Digest{2, byte(i)} }
	for n := 2; n <= 9; n++ {
		for q := 1; q < n; q++ {
			pk := fakeKey(n, q)
			for _, mk := range []func(*PublicKey, []int) (*Plan, error){PlanVerified, PlanBlame} {
				plan, err := mk(pk, available(n))
				if err != nil {
					t.Fatal(err)
				}
				for trial := 0; trial < 200; trial++ {
					f := 1 + rng.IntN(n)
					consistent := trial%2 == 0
					values := make([]Digest, len(plan.Quorums))
					for i, qu := range plan.Quorums {
						values[i] = truth
						if slices.Contains(qu, f) {
							switch {
							case consistent:
								values[i] = wrong(rng.IntN(2))
							case rng.IntN(3) > 0:
								values[i] = wrong(rng.IntN(3))
							}
						}
					}
					v, winner := judge(plan, values)
					where := fmt.Sprintf("N=%d Q=%d plan of %d faulty %d values %v verdict %+v", n, q, len(plan.Quorums), f, values, v)
					if winner >= 0 && values[winner] != truth {
						t.Fatalf("wrong total: %s", where)
					}
					if len(v.Faulty) > 0 && !slices.Equal(v.Faulty, []int{f}) {
						t.Fatalf("honest member named: %s", where)
					}
					if !v.Agreed && !slices.Contains(v.Suspects, f) {
						t.Fatalf("faulty member not a suspect: %s", where)
					}
					if consistent && n >= q+2 && len(plan.Quorums) > len(plan.QuorumsOf(f)) && isBlame(plan, n) && !slices.Equal(v.Faulty, []int{f}) {
						t.Fatalf("consistent faulty member not named: %s", where)
					}
				}
			}
		}
	}
}

// isBlame tells a blame plan from a verified one by its pair coverage.
func isBlame(plan *Plan, n int) bool {
	for x := 1; x <= n; x++ {
		for y := x + 1; y <= n; y++ {
			if !slices.ContainsFunc(plan.Quorums, func(qu []int) bool { return !slices.Contains(qu, x) && !slices.Contains(qu, y) }) {
				return false
			}
		}
	}
	return true
}

// tamperShift returns a tamper that shifts the plaintext a share opens by
// δ·X^0: it adds δ·T^-1 mod Q (the BGV encoding of δ) in the NTT domain.
// The result stays in range, so only comparing quorums catches it.
func tamperShift(p Params, party int, delta uint64) func(*DecryptionShare) {
	r := p.bgv.RingQ()
	shift := r.NewPoly()
	tInv := new(big.Int).ModInverse(new(big.Int).SetUint64(p.PlaintextModulus()), r.ModulusAtLevel[r.Level()])
	for i, q := range r.ModuliChain() {
		v := new(big.Int).Mul(tInv, new(big.Int).SetUint64(delta))
		shift.Coeffs[i][0] = v.Mod(v, new(big.Int).SetUint64(q)).Uint64()
	}
	r.NTT(shift, shift)
	return func(s *DecryptionShare) {
		if slices.Contains(s.Parties, party) {
			r.Add(s.value[0], shift, s.value[0])
		}
	}
}

// tamperRandom replaces a party's shares with uniform noise.
func tamperRandom(p Params, party int) func(*DecryptionShare) {
	rng := rand.New(rand.NewPCG(9, 10))
	return func(s *DecryptionShare) {
		if !slices.Contains(s.Parties, party) {
			return
		}
		for _, v := range s.value {
			for i, q := range p.bgv.RingQ().ModuliChain() {
				for j := range v.Coeffs[i] {
					v.Coeffs[i][j] = rng.Uint64N(q)
				}
			}
		}
	}
}

// A tampered decryption share is detected by the verified plan and its
// maker named by the blame plan, with the true total; with three members it
// is detected but cannot be told apart, and no honest member is named.
func TestTamperedShareNamed(t *testing.T) {
	p := params(t)
	for _, tc := range []struct {
		n, bad int
		tamper string
		named  bool
	}{
		{5, 3, "shift", true},
		{5, 1, "random", true},
		{4, 4, "shift", true},
		{7, 2, "shift", true},
		{3, 2, "shift", false},
	} {
		t.Run(fmt.Sprintf("N=%d/bad=%d/%s", tc.n, tc.bad, tc.tamper), func(t *testing.T) {
			keys := testKeys(t, tc.n, DefaultQuorum(tc.n))
			l, err := NewLayout(p, 100, 0, 30, tc.n)
			if err != nil {
				t.Fatal(err)
			}
			in := randomInputs(rand.New(rand.NewPCG(11, uint64(tc.n))), tc.n, 100, 30)
			tamper := tamperShift(p, tc.bad, 1)
			if tc.tamper == "random" {
				tamper = tamperRandom(p, tc.bad)
			}
			r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(keys[0].PublicKey, 2), tamper: tamper}
			res, err := r.run(t, in)
			if res == nil || res.Verdict.Agreed {
				t.Fatalf("tampering not detected: %v", err)
			}
			checkVerdict(t, res, err, tc.bad, plainSums(in), false)
			r.plan = PlanBlame
			res, err = r.run(t, in)
			if res == nil {
				t.Fatal(err)
			}
			checkVerdict(t, res, err, tc.bad, plainSums(in), tc.named)
			t.Logf("blame verdict %+v", res.Verdict)
		})
	}
}

// checkVerdict checks that a verdict names nobody but bad, names bad when
// it must, and that any total it returns is the true one.
func checkVerdict(t *testing.T, res *Result, err error, bad int, want []*big.Int, named bool) {
	t.Helper()
	v := res.Verdict
	if len(v.Faulty) > 0 && !slices.Equal(v.Faulty, []int{bad}) {
		t.Fatalf("named %v, the faulty member is %d", v.Faulty, bad)
	}
	if !slices.Contains(v.Suspects, bad) {
		t.Fatalf("suspects %v miss %d", v.Suspects, bad)
	}
	if named && !slices.Equal(v.Faulty, []int{bad}) {
		t.Fatalf("verdict %+v does not name %d (err %v)", v, bad, err)
	}
	if err != nil {
		if !errors.Is(err, ErrDisagree) {
			t.Fatal(err)
		}
		return
	}
	checkTotals(t, res.Totals, want)
}
