package lattice

import (
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// waitNoise waits until p holds n polynomials of smudging noise (the
// filler's progress is the event; the deadline only ends a hung test).
func waitNoise(t *testing.T, p *ZeroPool, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for p.Stats().Noise.Ready < n {
		if time.Now().After(deadline) {
			t.Fatalf("noise pool holds %d after 2 minutes, want %d", p.Stats().Noise.Ready, n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A round whose decryptors take their smudging noise from a pool decrypts
// exactly and agrees across quorums, both when the pool holds noise for
// every share and when it runs dry midway (the rest drawn by the
// Decryptor); the decryption noise has the width of fresh smudging; and
// every polynomial handed out is counted once.
func TestRoundWithNoisePool(t *testing.T) {
	const n, length, vb = 5, 20000, 32 // two ciphertexts per party
	keys := testKeys(t, n, DefaultQuorum(n))
	pk := keys[0].PublicKey
	l, err := NewLayout(params(t), length, 16, vb, n)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := PlanVerified(pk, available(n))
	if err != nil {
		t.Fatal(err)
	}
	var shares int // every quorum member's share of every ciphertext
	for _, q := range plan.Quorums {
		shares += len(q) * l.Ciphertexts()
	}
	rng := rand.New(rand.NewPCG(7, 8))
	for _, size := range []int{shares, 3} { // the pool holds 2·size
		p := newZeroPool(t, pk, (size+1)/2)
		waitNoise(t, p, 2*((size+1)/2))
		p.Pause() // the counts below are the round's alone
		in := randomInputs(rng, n, length, vb)
		r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(pk, size), noise: p}
		res, err := r.run(t, in)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Verdict.Agreed {
			t.Fatalf("size %d: verdict %+v", size, res.Verdict)
		}
		checkTotals(t, res.Totals, plainSums(in))
		if bits := r.opened.noiseBits(t); bits < smudgeBits || bits > smudgeBits+3 {
			t.Fatalf("size %d: decryption noise 2^%.1f, expected about 2^%d", size, bits, smudgeBits+1)
		}
		// A paused filler still delivers the polynomial it had drawn when
		// the pool was full: one more may be taken.
		st := p.Stats().Noise
		if st.Taken < int64(min(size, 2*((size+1)/2))) || st.Taken+st.Computed != int64(shares) {
			t.Errorf("size %d: taken %d, computed %d; want at least %d taken, %d in all", size, st.Taken, st.Computed, size, shares)
		}
	}
}

// Two shares of the same target and quorum made from one pool share no
// noise: no polynomial of one equals the other's (a reused u would make
// them equal, and their difference would give the key share), and the
// pool's noise is not the Decryptor's own (a share from a pool differs
// from one without).
func TestNoisePoolUsedOnce(t *testing.T) {
	f := newShareFixture(t)
	pk := f.keys[0].PublicKey
	q := f.plan.QuorumsOf(1)[0]
	p := newZeroPool(t, pk, f.l.Ciphertexts())
	waitNoise(t, p, 2*f.l.Ciphertexts())
	dec, err := NewDecryptor(f.keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := dec.UseNoise(p); err != nil {
		t.Fatal(err)
	}
	var seen [][]uint64
	for range 2 {
		s, err := dec.GenShare(shareTarget(t, f, dec), f.plan, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, h := range s.value {
			for _, prev := range seen {
				if slices.Equal(prev, h.Coeffs[0]) {
					t.Fatal("two shares of one target carry the same noise")
				}
			}
			seen = append(seen, h.Coeffs[0])
		}
	}
	if st := p.Stats().Noise; st.Taken != int64(2*f.l.Ciphertexts()) || st.Computed != 0 {
		t.Fatalf("taken %d, computed %d; want every polynomial from the pool", st.Taken, st.Computed)
	}
}

// A Decryptor refuses a pool of another key; a closed pool keeps no noise,
// and a Decryptor given it draws its own.
func TestNoisePoolKeyAndClose(t *testing.T) {
	f := newShareFixture(t)
	pk := f.keys[0].PublicKey
	other := testKeys(t, 2, 2)
	dec, err := NewDecryptor(f.keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := dec.UseNoise(newZeroPool(t, other[0].PublicKey, 1)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("a pool of another key: %v", err)
	}
	p := newZeroPool(t, pk, 1)
	waitNoise(t, p, 2)
	p.Close()
	select {
	case <-p.noise.Done():
	default:
		t.Fatal("Close returned before the noise filler stopped")
	}
	if st := p.Stats(); st.Noise.Ready != 0 || st.Bytes != 0 {
		t.Fatalf("kept %d polynomials of noise (%d bytes) after Close", st.Noise.Ready, st.Bytes)
	}
	if err := dec.UseNoise(p); err != nil {
		t.Fatal(err)
	}
	if _, err := dec.GenShare(shareTarget(t, f, dec), f.plan, f.plan.QuorumsOf(1)[0]); err != nil {
		t.Fatal(err)
	}
	if st := p.Stats().Noise; st.Taken != 0 || st.Computed != int64(f.l.Ciphertexts()) {
		t.Fatalf("after Close: taken %d, computed %d", st.Taken, st.Computed)
	}
}

// shareTarget is f's aggregate as dec's member checks it for decryption.
func shareTarget(t *testing.T, f *shareFixture, dec *Decryptor) *Target {
	t.Helper()
	tg, err := dec.Target(f.agg.Mask(), Expect{Context: f.agg.Context, Shape: f.l.Shape(), Committed: f.agg.Inputs})
	if err != nil {
		t.Fatal(err)
	}
	return tg
}
