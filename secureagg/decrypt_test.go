package secureagg

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/wire"
)

// carried is a decryption at root org01 of ciphertexts the decryptors do
// not hold: org01 asks t of the others at once and releases the rest.
func carried(c *consortium, net *jobtest.Network, name string, count int) *Decryption {
	step := coordinatedBy(c, c.names[len(c.names)-1])
	return &Decryption{Net: StepNetwork(net.Party(name), step), Step: step, Keys: c.keys[name],
		Root: "org01", Decryptors: c.names[1:], Ask: c.pk.Threshold, Count: count, Release: true,
		First: time.Now().Add(2 * time.Second), Late: time.Now().Add(4 * time.Second)}
}

// runDecryption runs Decrypt at org01 and Share, with vet, everywhere
// else; it returns the root's plaintexts and exclusions and every party's
// error.
func runDecryption(t *testing.T, c *consortium, net *jobtest.Network, cts []*big.Int, vet func(string) func([]*paillier.Ciphertext) error) ([]*big.Int, map[string]string, map[string]error) {
	t.Helper()
	enc, err := c.pk.EncryptMany(rand.Reader, cts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	errs := map[string]error{}
	var plain []*big.Int
	var excluded map[string]string
	var wg sync.WaitGroup
	for _, name := range c.names {
		wg.Go(func() {
			d := carried(c, net, name, len(enc))
			var err error
			if name == d.Root {
				plain, excluded, err = d.Decrypt(ctx, enc)
			} else {
				err = d.Share(ctx, nil, vet(name))
			}
			mu.Lock()
			errs[name] = err
			mu.Unlock()
		})
	}
	wg.Wait()
	return plain, excluded, errs
}

func accept(string) func([]*paillier.Ciphertext) error {
	return func([]*paillier.Ciphertext) error { return nil }
}

// A root decrypts ciphertexts the decryptors do not hold: it sends them
// with its requests to t parties, releases the others, and combines t+1
// valid shares; a corrupted share makes it ask the parties it held back,
// and the corrupter is excluded and named.
func TestDecryptionCarried(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 5) // t = 2
	want := bigs(7, 0, 123456789)
	t.Run("released", func(t *testing.T) {
		t.Parallel()
		net := jobtest.NewNetwork(c.names...)
		net.Capture("org04")
		plain, excluded, errs := runDecryption(t, c, net, want, accept)
		for n, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
		}
		if len(excluded) != 0 || !slices.EqualFunc(plain, want, func(a, b *big.Int) bool { return a.Cmp(b) == 0 }) {
			t.Fatalf("plaintexts %v, excluded %v", plain, excluded)
		}
		if sent := net.Captured("org04"); len(sent) != 0 {
			t.Fatalf("org04, released, sent %s", sent[0].Message.Type)
		}
	})
	t.Run("corrupted", func(t *testing.T) {
		t.Parallel()
		net := jobtest.NewNetwork(c.names...)
		corruptShares(t, net, c.pk, "org02")
		plain, excluded, errs := runDecryption(t, c, net, want, accept)
		for n, err := range errs {
			if err != nil {
				t.Fatalf("%s: %v", n, err)
			}
		}
		if why := excluded["org02"]; len(excluded) != 1 || !strings.Contains(why, "invalid decryption share") {
			t.Fatalf("excluded %v, want org02's invalid share", excluded)
		}
		if !slices.EqualFunc(plain, want, func(a, b *big.Int) bool { return a.Cmp(b) == 0 }) {
			t.Fatalf("plaintexts %v, want %v", plain, want)
		}
	})
}

// Decryptors that vet what a root asks, and refuse, make no share: the
// root has only its own and decrypts nothing; each refusal is the vet's
// own error.
func TestDecryptionVetRefuses(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3) // t = 1
	net := jobtest.NewNetwork(c.names...)
	for _, n := range c.names {
		net.Capture(n)
	}
	refuse := func(name string) func([]*paillier.Ciphertext) error {
		return func([]*paillier.Ciphertext) error { return errors.New(name + " refuses") }
	}
	plain, _, errs := runDecryption(t, c, net, bigs(42), refuse)
	if plain != nil || !errors.Is(errs["org01"], ErrTooFewShares) {
		t.Fatalf("root: %v, %v; want too few shares", plain, errs["org01"])
	}
	for _, n := range c.names[1:] {
		if err := errs[n]; err == nil || err.Error() != n+" refuses" {
			t.Errorf("%s: %v, want its vet's refusal", n, err)
		}
		for _, s := range net.Captured(n) {
			if s.Message.Type == TypeShare {
				t.Errorf("%s sent a decryption share", n)
			}
		}
	}
}

// A decryptor that does not hold the ciphertexts shares nothing without a
// vet: it would be a decryption oracle for the root.
func TestDecryptionNeedsVet(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	net := jobtest.NewNetwork(c.names...)
	err := carried(c, net, "org02", 1).Share(context.Background(), nil, nil)
	if err == nil || !strings.Contains(err.Error(), "no vetting") {
		t.Fatalf("%v", err)
	}
	d := carried(c, net, "org02", 1)
	d.Decryptors = []string{"org02", "org02"}
	if err := d.Share(context.Background(), nil, func([]*paillier.Ciphertext) error { return nil }); err == nil {
		t.Fatal("a decryptor named twice accepted")
	}
}

func FuzzDecodeRequest(f *testing.F) {
	c := testConsortium(f, 3)
	cts, err := c.pk.EncryptMany(rand.Reader, bigs(1, 2))
	if err != nil {
		f.Fatal(err)
	}
	raw, _ := c.pk.MarshalCiphertexts(cts)
	for _, r := range []requestBody{{C: raw}, {Release: true}, {}, {C: raw, Release: true}} {
		b, _ := wire.Marshal(r)
		f.Add(b)
	}
	f.Add([]byte{0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, held := range []bool{false, true} {
			r, err := decodeRequest(b, &c.pk.PublicKey, 2, held)
			if err != nil {
				continue
			}
			switch {
			case r.Release && len(r.C) > 0, held && len(r.C) > 0:
				t.Fatalf("accepted %+v (held %v)", r, held)
			case !held && !r.Release:
				if got, err := c.pk.UnmarshalCiphertexts(r.C); err != nil || len(got) != 2 {
					t.Fatalf("accepted a request of %d ciphertexts (%v)", len(got), err)
				}
			}
		}
	})
}
