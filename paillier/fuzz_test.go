package paillier

import (
	"bytes"
	"crypto/rand"
	"math/big"
	"testing"
)

// Every decoder must reject or accept without panicking, and whatever it
// accepts must re-encode to exactly the same bytes (the encoding is
// canonical).

func FuzzUnmarshalThresholdPublicKey(f *testing.F) {
	tpk, _, _ := testKeys(f)
	b, _ := tpk.MarshalBinary()
	f.Add(b)
	f.Add([]byte{0x90})
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := UnmarshalThresholdPublicKey(b)
		if err != nil {
			return
		}
		out, err := k.MarshalBinary()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func FuzzUnmarshalPublicKey(f *testing.F) {
	_, _, sk := testKeys(f)
	b, _ := sk.PublicKey.MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := UnmarshalPublicKey(b)
		if err != nil {
			return
		}
		out, err := k.MarshalBinary()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func FuzzUnmarshalKeyShare(f *testing.F) {
	_, shares, _ := testKeys(f)
	b, _ := shares[0].MarshalBinary()
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		ks, err := UnmarshalKeyShare(b)
		if err != nil {
			return
		}
		out, err := ks.MarshalBinary()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

func FuzzUnmarshalCiphertexts(f *testing.F) {
	tpk, _, _ := testKeys(f)
	c := mustEnc(f, &tpk.PublicKey, big.NewInt(3))
	b, _ := tpk.MarshalCiphertexts([]*Ciphertext{c, c})
	f.Add(b)
	e, _ := tpk.MarshalCiphertexts(nil)
	f.Add(e)
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := tpk.UnmarshalCiphertexts(b)
		if err != nil {
			return
		}
		for _, c := range cs {
			if err := tpk.ValidateCiphertext(c); err != nil {
				t.Fatal("accepted an invalid ciphertext")
			}
		}
		out, err := tpk.MarshalCiphertexts(cs)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
	})
}

// FuzzUnmarshalDecryptionShare also runs the verifier on every accepted
// share: mutated shares must never verify (and never panic).
func FuzzUnmarshalDecryptionShare(f *testing.F) {
	tpk, shares, _ := testKeys(f)
	cs := []*Ciphertext{mustEnc(f, &tpk.PublicKey, big.NewInt(3))}
	d, err := shares[0].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		f.Fatal(err)
	}
	good, _ := d.MarshalBinary()
	f.Add(good)
	f.Fuzz(func(t *testing.T, b []byte) {
		sh, err := tpk.UnmarshalDecryptionShare(b)
		if err != nil {
			return
		}
		out, err := sh.MarshalBinary()
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("re-encoding differs: %v", err)
		}
		verr := tpk.VerifyShare(cs, sh, testCtx)
		if !bytes.Equal(b, good) && verr == nil {
			// Only a different encoding of the same share could verify,
			// and the encoding is canonical.
			t.Fatal("a mutated share verified")
		}
	})
}
