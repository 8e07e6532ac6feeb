package paillier

import (
	"context"
	"math/big"
	mrand "math/rand/v2"
	"testing"
	"time"
)

// TestPoolEncryptManyFromSourceUsedOnce checks that EncryptMany takes the
// ready randomisers first, in the source's order, computes the rest from
// the same source, and never hands one out twice: Enc(0) is the
// randomiser itself. The filler is stopped (its context cancelled) once
// the pool is full: a running filler draws from the same source while
// EncryptMany does, and rand.Int's rejections then interleave the two
// streams, so that no position in the source could be asserted.
func TestPoolEncryptManyFromSourceUsedOnce(t *testing.T) {
	_, _, sk := testKeys(t)
	pk := &sk.PublicKey
	const size, n = 3, 10
	ctx, stopFiller := context.WithCancel(context.Background())
	defer stopFiller()
	p, err := NewRandomizerPool(ctx, pk, mrand.NewChaCha8([32]byte{9}), size)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitReady(t, p, size)
	stopFiller()
	<-p.supply.Done()
	zeros := make([]*big.Int, n)
	for i := range zeros {
		zeros[i] = new(big.Int)
	}
	cts, err := p.EncryptMany(zeros)
	if err != nil {
		t.Fatal(err)
	}
	// The filler may have drawn one more randomiser than it could store
	// before it stopped: every randomiser lies among the source's first n+1.
	want := mrand.NewChaCha8([32]byte{9})
	stream := map[string]int{}
	for i := range n + 1 {
		r, err := pk.randomizer(want)
		if err != nil {
			t.Fatal(err)
		}
		stream[r.String()] = i
	}
	seen := map[string]bool{}
	for i, c := range cts {
		at, ok := stream[c.C.String()]
		switch {
		case !ok:
			t.Fatalf("randomiser %d is not one of the source's", i)
		case i < size && at != i:
			t.Fatalf("pooled randomiser %d is the source's %d-th", i, at)
		case seen[c.C.String()]:
			t.Fatalf("randomiser %d handed out twice", i)
		}
		seen[c.C.String()] = true
	}
	st := p.Stats()
	if st.Taken < size || st.Taken+st.Computed != n {
		t.Fatalf("stats %+v: want at least %d taken and %d in all", st, size, n)
	}
	// Plaintexts other than zero decrypt.
	ms := []*big.Int{big.NewInt(1), big.NewInt(123456), new(big.Int).Sub(pk.N, big.NewInt(1))}
	if cts, err = p.EncryptMany(ms); err != nil {
		t.Fatal(err)
	}
	for i, c := range cts {
		if got, err := sk.Decrypt(c); err != nil || got.Cmp(ms[i]) != 0 {
			t.Fatalf("plaintext %d decrypts to %v, %v", i, got, err)
		}
	}
}

// TestPoolPauseAndBound checks that a paused pool still hands out what is
// ready, fills again on Resume up to its bound and no further, and that
// Close returns while paused.
func TestPoolPauseAndBound(t *testing.T) {
	_, _, sk := testKeys(t)
	const size = 4
	p, err := NewRandomizerPool(context.Background(), &sk.PublicKey, nil, size)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, p, size)
	p.Pause()
	p.Pause() // idempotent
	if !p.Stats().Paused {
		t.Fatal("Stats does not report the pause")
	}
	for range size + 1 { // the last may be the one the filler held
		if _, err := p.Encrypt(big.NewInt(7)); err != nil {
			t.Fatal(err)
		}
	}
	st := p.Stats()
	if st.Taken+st.Computed != size+1 || st.Made > st.Taken+size+1 {
		t.Fatalf("paused: stats %+v", st)
	}
	p.Resume()
	p.Resume()
	waitReady(t, p, size)
	st = p.Stats()
	// Made counts the one the filler holds while the pool is full.
	if st.Ready != size || st.Size != size || st.Made > st.Taken+size+1 || st.Bytes != size*sk.PublicKey.CiphertextSize() {
		t.Fatalf("refilled: stats %+v", st)
	}
	p.Pause()
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(20 * time.Second):
		t.Fatal("Close of a paused pool still waiting after 20 s")
	}
}

func TestPoolServesItsKeyOnly(t *testing.T) {
	_, _, sk := testKeys(t)
	pk := sk.PublicKey
	p, err := NewRandomizerPool(context.Background(), &pk, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if !p.Serves(&sk.PublicKey) {
		t.Fatal("the pool does not serve its own key")
	}
	short := sk.PublicKey
	short.ShortExponent = true
	other := sk.PublicKey
	other.N = new(big.Int).Add(other.N, big.NewInt(2))
	textbook := sk.PublicKey
	textbook.H = nil
	for name, k := range map[string]*PublicKey{"short exponent": &short, "other modulus": &other, "textbook": &textbook, "nil": nil} {
		if p.Serves(k) {
			t.Errorf("the pool serves a key with %s", name)
		}
	}
}
