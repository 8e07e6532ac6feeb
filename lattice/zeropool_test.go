package lattice

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// waitZeros waits until p holds n encryptions of zero (the filler's
// progress is the event; the deadline only ends a hung test).
func waitZeros(t *testing.T, p *ZeroPool, n int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for p.Stats().Ready < n {
		if time.Now().After(deadline) {
			t.Fatalf("zero pool holds %d after 2 minutes, want %d", p.Stats().Ready, n)
		}
		time.Sleep(time.Millisecond)
	}
}

func newZeroPool(t *testing.T, pk *PublicKey, size int) *ZeroPool {
	t.Helper()
	p, err := NewZeroPool(context.Background(), pk, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	return p
}

// A round whose parties take their encryptions of zero from a pool sums
// exactly, both when the pool holds enough for every ciphertext and when
// it runs dry midway (the rest computed by the Encryptor), and the pool
// hands out each encryption of zero once.
func TestRoundWithZeroPool(t *testing.T) {
	const n, length, vb = 3, 20000, 32 // two ciphertexts per party
	keys := testKeys(t, n, DefaultQuorum(n))
	l, err := NewLayout(params(t), length, 16, vb, n)
	if err != nil {
		t.Fatal(err)
	}
	if l.Ciphertexts() < 2 {
		t.Fatalf("layout of %d ciphertexts, the test wants several", l.Ciphertexts())
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for _, size := range []int{n * l.Ciphertexts(), 3} {
		p := newZeroPool(t, keys[0].PublicKey, size)
		waitZeros(t, p, size)
		p.Pause() // the counts below are the round's alone
		in := randomInputs(rng, n, length, vb)
		r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(keys[0].PublicKey, size), zeros: p}
		res, err := r.run(t, in)
		if err != nil {
			t.Fatal(err)
		}
		if !res.Verdict.Agreed {
			t.Fatalf("size %d: verdict %+v", size, res.Verdict)
		}
		checkTotals(t, res.Totals, plainSums(in))
		st := p.Stats()
		// A paused filler still delivers the encryption of zero it had
		// made when the pool was full: one more may be taken.
		if want := int64(n * l.Ciphertexts()); st.Taken < int64(size) || st.Taken+st.Computed != want {
			t.Errorf("size %d: taken %d, computed %d; want at least %d taken, %d in all",
				size, st.Taken, st.Computed, size, want)
		}
	}
}

// Two encryptions of the same vector from one pool share no mask: neither
// c0 nor c1 of any ciphertext repeats (a reused encryption of zero would
// repeat c1 and show the plaintexts' difference in c0).
func TestZeroPoolUsedOnce(t *testing.T) {
	keys := testKeys(t, 3, 2)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(t), 20000, 16, 32, 3)
	if err != nil {
		t.Fatal(err)
	}
	p := newZeroPool(t, pk, 2*l.Ciphertexts())
	waitZeros(t, p, 2*l.Ciphertexts())
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.UseZeros(p); err != nil {
		t.Fatal(err)
	}
	v := make([]int64, 20000)
	var seen [][]uint64
	for range 2 {
		a, err := enc.EncryptInts(testContext(pk, 1), 1, l, v)
		if err != nil {
			t.Fatal(err)
		}
		for k := range a.c0 {
			for _, c := range [][]uint64{a.c0[k].Coeffs[0], a.c1[k].Coeffs[0]} {
				for _, s := range seen {
					if slices.Equal(s, c) {
						t.Fatal("a ciphertext half repeats")
					}
				}
				seen = append(seen, c)
			}
		}
	}
}

// An Encryptor refuses a pool of another key; a closed pool stops its
// filler, keeps nothing, and an Encryptor given it computes every
// encryption itself.
func TestZeroPoolKeyAndClose(t *testing.T) {
	keys := testKeys(t, 3, 2)
	other := testKeys(t, 2, 2)
	pk := keys[0].PublicKey
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	if err := enc.UseZeros(newZeroPool(t, other[0].PublicKey, 1)); !errors.Is(err, ErrMismatch) {
		t.Fatalf("a pool of another key: %v", err)
	}
	p := newZeroPool(t, pk, 2)
	waitZeros(t, p, 2) // the filler now blocks on a full pool
	p.Close()
	p.Close() // idempotent
	select {
	case <-p.supply.Done():
	default:
		t.Fatal("Close returned before the filler stopped")
	}
	if st := p.Stats(); st.Ready != 0 || st.Bytes != 0 {
		t.Fatalf("kept %d (%d bytes) after Close", st.Ready, st.Bytes)
	}
	l, err := NewLayout(params(t), 10, 0, 16, 3)
	if err != nil {
		t.Fatal(err)
	}
	r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(pk, 1), zeros: p}
	in := randomInputs(rand.New(rand.NewPCG(5, 6)), 3, 10, 16)
	res, err := r.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, res.Totals, plainSums(in))
	if st := p.Stats(); st.Taken != 0 || st.Computed != 3 {
		t.Fatalf("after Close: taken %d, computed %d", st.Taken, st.Computed)
	}
}

// A pool's filler stops when its context ends, and a paused one computes
// nothing more than the encryption under way until it resumes.
func TestZeroPoolContextAndPause(t *testing.T) {
	pk := testKeys(t, 2, 2)[0].PublicKey
	ctx, cancel := context.WithCancel(context.Background())
	p, err := NewZeroPool(ctx, pk, 2)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-p.supply.Done():
	case <-time.After(time.Minute):
		t.Fatal("filler still running a minute after its context ended")
	}
	p.Close()

	q := newZeroPool(t, pk, 4)
	q.Pause()
	made := q.Stats().Made
	time.Sleep(50 * time.Millisecond) // a paused filler makes at most the one under way
	if got := q.Stats().Made; got > made+1 || !q.Stats().Paused {
		t.Fatalf("paused pool made %d → %d", made, got)
	}
	q.Resume()
	waitZeros(t, q, 4)
}
