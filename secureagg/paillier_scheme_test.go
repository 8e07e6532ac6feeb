package secureagg

import (
	"context"
	"crypto/rand"
	"errors"
	"testing"

	"github.com/cohortdm/cohort/paillier"
)

// The Paillier backend's arithmetic alone, with no network: every party's
// encryption, their homomorphic sum, a joint decryption by t+1 key shares
// and the decoding give the plain sum; a sum beyond what the members'
// in-range inputs can produce is ErrRange, and a malformed component
// ErrTampered.
func TestPaillierSchemeWithoutMessages(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 3)
	cfg := testConfig(c, c.names[0])
	enc, err := planEncoding(len(c.names), cfg)
	if err != nil {
		t.Fatal(err)
	}
	const n = 70 // more than one plaintext's slots
	sc, err := newPaillierScheme(c.pk, enc, n, len(c.names))
	if err != nil {
		t.Fatal(err)
	}
	in := testInputs(c, n)
	var total []*paillier.Ciphertext
	var comps [][]byte
	for _, name := range c.names {
		cts, err := sc.encrypt(context.Background(), rand.Reader, in[name])
		if err != nil {
			t.Fatal(err)
		}
		if len(cts) != sc.count || sc.count < 2 {
			t.Fatalf("%d ciphertexts for %d values, want %d (> 1)", len(cts), n, sc.count)
		}
		b, err := sc.marshal(cts)
		if err != nil {
			t.Fatal(err)
		}
		comps = append(comps, b)
		if total == nil {
			total = cts
		} else {
			total = sc.add(total, cts)
		}
	}
	formed, err := sc.form(comps, "org01")
	if err != nil {
		t.Fatal(err)
	}
	decrypt := func(cts []*paillier.Ciphertext) []float64 {
		t.Helper()
		var shares []*paillier.DecryptionShare
		for _, name := range c.names[:c.pk.Threshold+1] {
			sh, err := c.keys[name].Share.DecryptShare(rand.Reader, cts, paillierCtx())
			if err != nil {
				t.Fatal(err)
			}
			shares = append(shares, sh)
		}
		plain, err := c.pk.Combine(cts, shares)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := sc.decodeSum(plain)
		if err != nil {
			t.Fatal(err)
		}
		return sum
	}
	want := plainSum(in, c.names)
	checkSum(t, decrypt(total), want, 1e-3)
	checkSum(t, decrypt(formed), want, 1e-3)

	if _, err := sc.form([][]byte{comps[0], comps[1][:len(comps[1])-1]}, "org01"); !errors.Is(err, ErrTampered) {
		t.Errorf("a truncated component: %v, want ErrTampered", err)
	}
	// One input beyond its bound, summed as if in range: the decoded slot
	// exceeds what the members can produce.
	big := make([]float64, n)
	big[3] = 1 << 23 // 2^39 encoded: in range alone
	over, err := sc.encrypt(context.Background(), rand.Reader, big)
	if err != nil {
		t.Fatal(err)
	}
	sum := sc.add(total, over)
	for range 7 {
		sum = sc.add(sum, over)
	}
	var shares []*paillier.DecryptionShare
	for _, name := range c.names[:c.pk.Threshold+1] {
		sh, err := c.keys[name].Share.DecryptShare(rand.Reader, sum, paillierCtx())
		if err != nil {
			t.Fatal(err)
		}
		shares = append(shares, sh)
	}
	plain, err := c.pk.Combine(sum, shares)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sc.decodeSum(plain); !errors.Is(err, ErrRange) {
		t.Errorf("a sum beyond %d in-range inputs: %v, want ErrRange", len(c.names), err)
	}
	if _, err := sc.encrypt(context.Background(), rand.Reader, []float64{1 << 40}); !errors.Is(err, ErrRange) {
		t.Errorf("an input beyond 2^ValueBits: %v, want ErrRange", err)
	}
}
