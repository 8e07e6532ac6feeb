package paillier

import (
	"context"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"testing"
	"time"
)

// waitReady waits until the pool holds n randomisers.
func waitReady(t *testing.T, p *RandomizerPool, n int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for p.Ready() < n {
		if time.Now().After(deadline) {
			t.Fatalf("pool holds %d randomisers after 20 s, want %d", p.Ready(), n)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestPoolEncryptDecrypts(t *testing.T) {
	_, _, sk := testKeys(t)
	for _, short := range []bool{false, true} {
		pk := sk.PublicKey
		pk.ShortExponent = short
		p, err := NewRandomizerPool(context.Background(), &pk, nil, 8)
		if err != nil {
			t.Fatal(err)
		}
		waitReady(t, p, 8)
		// 8 from the pool, then more than the filler can have made: some
		// computed by Encrypt itself.
		for i := range 40 {
			m := randPlain(t, &pk)
			c, err := p.Encrypt(m)
			if err != nil {
				t.Fatal(err)
			}
			if i%2 == 1 {
				if c, err = p.Rerandomize(c); err != nil {
					t.Fatal(err)
				}
			}
			got, err := sk.Decrypt(c)
			if err != nil || got.Cmp(m) != 0 {
				t.Fatalf("short=%v, encryption %d: got %v, %v; want %v", short, i, got, err, m)
			}
		}
		p.Close()
	}
}

// The pool hands out H^r for r read from its source, in order, each once:
// with a deterministic source the randomisers are exactly the ones the
// same stream gives PublicKey.randomizer, and no two encryptions of one
// plaintext agree.
func TestPoolRandomisersFromSourceUsedOnce(t *testing.T) {
	_, _, sk := testKeys(t)
	pk := &sk.PublicKey
	const size = 6
	p, err := NewRandomizerPool(context.Background(), pk, mrand.NewChaCha8([32]byte{7}), size)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	waitReady(t, p, size)
	want := mrand.NewChaCha8([32]byte{7})
	zero := new(big.Int)
	seen := map[string]bool{}
	for i := range size {
		c, err := p.Encrypt(zero) // Enc(0) = the randomiser itself
		if err != nil {
			t.Fatal(err)
		}
		r, err := pk.randomizer(want)
		if err != nil {
			t.Fatal(err)
		}
		if c.C.Cmp(r) != 0 {
			t.Fatalf("randomiser %d is not the %d-th H^r of the source", i, i)
		}
		if seen[c.C.String()] {
			t.Fatalf("randomiser %d handed out twice", i)
		}
		seen[c.C.String()] = true
	}
}

func TestPoolCloseStopsFiller(t *testing.T) {
	_, _, sk := testKeys(t)
	p, err := NewRandomizerPool(context.Background(), &sk.PublicKey, nil, 4)
	if err != nil {
		t.Fatal(err)
	}
	waitReady(t, p, 4) // the filler now blocks on a full pool
	p.Close()
	p.Close() // idempotent
	select {
	case <-p.supply.Done():
	default:
		t.Fatal("Close returned before the filler stopped")
	}
	if p.Ready() != 0 {
		t.Fatalf("%d randomisers kept after Close", p.Ready())
	}
	m := big.NewInt(42)
	c, err := p.Encrypt(m) // still works, without the filler
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := sk.Decrypt(c); got.Cmp(m) != 0 {
		t.Fatalf("after Close: decrypts to %v", got)
	}
}

func TestPoolContextStopsFiller(t *testing.T) {
	_, _, sk := testKeys(t)
	ctx, cancel := context.WithCancel(context.Background())
	p, err := NewRandomizerPool(ctx, &sk.PublicKey, nil, 2)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case <-p.supply.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("filler still running 20 s after its context ended")
	}
	p.Close()
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("no entropy") }

func TestPoolFailingSource(t *testing.T) {
	_, _, sk := testKeys(t)
	p, err := NewRandomizerPool(context.Background(), &sk.PublicKey, failingReader{}, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	select {
	case <-p.supply.Done(): // the filler gave up
	case <-time.After(20 * time.Second):
		t.Fatal("filler did not stop on a failing source")
	}
	if _, err := p.Encrypt(big.NewInt(1)); err == nil {
		t.Fatal("Encrypt succeeded without randomness")
	}
	if _, err := p.Rerandomize(&Ciphertext{C: big.NewInt(5)}); err == nil {
		t.Fatal("Rerandomize succeeded without randomness")
	}
}

func TestPoolRefusesBadInput(t *testing.T) {
	_, _, sk := testKeys(t)
	if _, err := NewRandomizerPool(context.Background(), &sk.PublicKey, nil, 0); err == nil {
		t.Fatal("size 0 accepted")
	}
	if _, err := NewRandomizerPool(context.Background(), &PublicKey{}, nil, 4); !errors.Is(err, ErrInvalidKey) {
		t.Fatalf("empty key: %v", err)
	}
	p, err := NewRandomizerPool(context.Background(), &sk.PublicKey, nil, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := p.Encrypt(nil); !errors.Is(err, ErrOverflow) {
		t.Fatalf("nil plaintext: %v", err)
	}
	if _, err := p.Encrypt(sk.PlaintextModulus()); !errors.Is(err, ErrOverflow) {
		t.Fatalf("plaintext n^s: %v", err)
	}
	if _, err := p.Rerandomize(nil); !errors.Is(err, ErrInvalidCiphertext) {
		t.Fatalf("nil ciphertext: %v", err)
	}
}
