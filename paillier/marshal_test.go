package paillier

import (
	"bytes"
	"crypto/rand"
	"errors"
	"math/big"
	"testing"
)

func TestMarshalRoundTrip(t *testing.T) {
	tpk, shares, sk := testKeys(t)
	b, err := tpk.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	tpk2, err := UnmarshalThresholdPublicKey(b)
	if err != nil {
		t.Fatal(err)
	}
	if tpk2.KeyID != tpk.KeyID || tpk2.N.Cmp(tpk.N) != 0 || tpk2.Threshold != tpk.Threshold {
		t.Fatal("public key round trip")
	}
	kb, err := shares[1].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	ks, err := UnmarshalKeyShare(kb)
	if err != nil || ks.Index != 2 || ks.Secret.Cmp(shares[1].Secret) != 0 {
		t.Fatalf("key share round trip: %v", err)
	}
	m := big.NewInt(99)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, m), mustEnc(t, &tpk.PublicKey, big.NewInt(1))}
	cb, err := tpk.MarshalCiphertexts(cs)
	if err != nil {
		t.Fatal(err)
	}
	cs2, err := tpk2.UnmarshalCiphertexts(cb)
	if err != nil || len(cs2) != 2 || cs2[0].C.Cmp(cs[0].C) != 0 {
		t.Fatalf("ciphertexts: %v", err)
	}
	// A share made with the decoded key share over decoded ciphertexts
	// verifies under the decoded public key.
	d, err := ks.DecryptShare(rand.Reader, cs2, testCtx)
	if err != nil {
		t.Fatal(err)
	}
	db, err := d.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	d2, err := tpk2.UnmarshalDecryptionShare(db)
	if err != nil {
		t.Fatal(err)
	}
	if err := tpk.VerifyShare(cs, d2, testCtx); err != nil {
		t.Fatal(err)
	}
	db2, _ := d2.MarshalBinary()
	if !bytes.Equal(db, db2) {
		t.Fatal("share encoding not canonical")
	}
	pb, err := sk.PublicKey.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	pk, err := UnmarshalPublicKey(pb)
	if err != nil || pk.N.Cmp(sk.N) != 0 || pk.H.Cmp(sk.H) != 0 {
		t.Fatalf("public key: %v", err)
	}
	c := mustEnc(t, pk, m)
	if got, _ := sk.Decrypt(c); got.Cmp(m) != 0 {
		t.Fatal("decoded public key encrypts wrongly")
	}
}

func TestUnmarshalStrict(t *testing.T) {
	tpk, shares, _ := testKeys(t)
	cs := []*Ciphertext{mustEnc(t, &tpk.PublicKey, big.NewInt(1))}
	cb, _ := tpk.MarshalCiphertexts(cs)
	pb, _ := tpk.MarshalBinary()
	kb, _ := shares[0].MarshalBinary()
	d, _ := shares[0].DecryptShare(rand.Reader, cs, testCtx)
	db, _ := d.MarshalBinary()
	size := tpk.CiphertextSize()

	decoders := map[string]func([]byte) error{
		"ciphertexts": func(b []byte) error { _, err := tpk.UnmarshalCiphertexts(b); return err },
		"public key":  func(b []byte) error { _, err := UnmarshalThresholdPublicKey(b); return err },
		"key share":   func(b []byte) error { _, err := UnmarshalKeyShare(b); return err },
		"share":       func(b []byte) error { _, err := tpk.UnmarshalDecryptionShare(b); return err },
	}
	inputs := map[string][]byte{"ciphertexts": cb, "public key": pb, "key share": kb, "share": db}
	for name, b := range inputs {
		dec := decoders[name]
		if err := dec(b); err != nil {
			t.Fatalf("%s: valid input rejected: %v", name, err)
		}
		if err := dec(append(append([]byte(nil), b...), 0)); !errors.Is(err, ErrDecode) {
			t.Errorf("%s: trailing byte accepted: %v", name, err)
		}
		if err := dec(b[:len(b)-1]); err == nil {
			t.Errorf("%s: truncated input accepted", name)
		}
		for other, ob := range inputs {
			if other != name && dec(ob) == nil {
				t.Errorf("%s decoder accepted a %s", name, other)
			}
		}
	}
	// A ciphertext equal to 0, to n^(s+1)-1+1 (too long), or sharing a
	// factor with n.
	bad := func(x *big.Int) []byte {
		b, err := tpk.MarshalCiphertexts([]*Ciphertext{{C: x}})
		if err != nil {
			// Too large to encode: build by hand.
			b2, _ := tpk.MarshalCiphertexts(cs)
			copy(b2[len(b2)-size:], bytes.Repeat([]byte{0xff}, size))
			return b2
		}
		return b
	}
	p := new(big.Int).GCD(nil, nil, tpk.N, tpk.N) // n itself shares a factor
	for _, x := range []*big.Int{big.NewInt(0), p, new(big.Int).Set(tpk.NS1), new(big.Int).Sub(new(big.Int).Lsh(one, uint(8*size)), one)} {
		if _, err := tpk.UnmarshalCiphertexts(bad(x)); !errors.Is(err, ErrDecode) {
			t.Errorf("ciphertext %v accepted: %v", x, err)
		}
	}
	// Proof response one bit too long.
	d2 := *d
	d2.Proof = &Proof{E: d.Proof.E, Z: new(big.Int).Lsh(one, uint(tpk.rhoBits()+1))}
	b2, _ := d2.MarshalBinary()
	if _, err := tpk.UnmarshalDecryptionShare(b2); !errors.Is(err, ErrDecode) {
		t.Errorf("oversized z accepted: %v", err)
	}
	// Index outside 1..Parties.
	d3 := *d
	d3.Index = tpk.Parties + 1
	b3, _ := d3.MarshalBinary()
	if _, err := tpk.UnmarshalDecryptionShare(b3); !errors.Is(err, ErrDecode) {
		t.Errorf("index %d accepted: %v", d3.Index, err)
	}
	// A key share whose secret does not match its verification key.
	ks := *shares[0]
	ks.Secret = new(big.Int).Add(ks.Secret, one)
	kb2, _ := ks.MarshalBinary()
	if _, err := UnmarshalKeyShare(kb2); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("mismatched key share accepted: %v", err)
	}
	// A public key with a changed verification key fails the key id check.
	tpk2 := *tpk
	tpk2.VerificationKeys = append([]*big.Int(nil), tpk.VerificationKeys...)
	tpk2.VerificationKeys[0] = tpk.VerificationKeys[1]
	pb2, _ := tpk2.MarshalBinary()
	if _, err := UnmarshalThresholdPublicKey(pb2); !errors.Is(err, ErrDecode) {
		t.Errorf("tampered public key accepted: %v", err)
	}
}
