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
	// Degenerate keys that used to decode (see keycheck_test.go).
	for _, forge := range []func(k *ThresholdPublicKey){
		func(k *ThresholdPublicKey) {
			k.V = big.NewInt(1)
			for i := range k.VerificationKeys {
				k.VerificationKeys[i] = big.NewInt(1)
			}
		},
		func(k *ThresholdPublicKey) { k.H = big.NewInt(1) },
		func(k *ThresholdPublicKey) { k.VerificationKeys[1] = k.VerificationKeys[0] },
	} {
		fb, _ := forgeThreshold(tpk, forge).MarshalBinary()
		f.Add(fb)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := UnmarshalThresholdPublicKey(b)
		if err != nil {
			return
		}
		// Whatever decodes passes every check Check makes.
		if err := k.Check(); err != nil {
			t.Fatalf("decoded key fails Check: %v", err)
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
	// Degenerate keys that used to decode: H = 1, n = 3·q.
	weak := sk.PublicKey
	weak.H = big.NewInt(1)
	wb, _ := weak.MarshalBinary()
	f.Add(wb)
	q, _ := rand.Prime(rand.Reader, testBits-1)
	n3 := new(big.Int).Mul(big.NewInt(3), q)
	nb, _ := (&PublicKey{N: n3, S: 1, NS: n3, NS1: new(big.Int).Mul(n3, n3), H: big.NewInt(2)}).MarshalBinary()
	f.Add(nb)
	f.Fuzz(func(t *testing.T, b []byte) {
		k, err := UnmarshalPublicKey(b)
		if err != nil {
			return
		}
		if checkModulus(k.N) != nil || checkElement(k.H, k.N, k.NS1, false, "H") != nil {
			t.Fatal("decoded a key that fails the key checks")
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
