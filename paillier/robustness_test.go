package paillier

import (
	"crypto/rand"
	"fmt"
	"math"
	"math/big"
	"testing"
)

// noPanic runs f and turns a panic into a test failure. Several of the
// inputs below used to panic inside a worker goroutine of parallel, which
// crashes the process instead of reaching this recover.
func noPanic(t *testing.T, name string, f func() error) error {
	t.Helper()
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				t.Errorf("%s panicked: %v", name, r)
				err = fmt.Errorf("panic: %v", r)
			}
		}()
		err = f()
	}()
	return err
}

// TestExportedAPIRefusesMalformedInput: every exported function given a
// ciphertext with a nil C, a nil value, an index 0 or N+1, or a nil or
// out-of-range secret returns an error (or, for the functions without an
// error result, an invalid ciphertext or nil) and never panics.
func TestExportedAPIRefusesMalformedInput(t *testing.T) {
	f := newMalformedFixture(t)
	f.checkBadKeyShares(t)
	f.checkBadCiphertexts(t)
	f.checkNilOperands(t)
	f.checkNilPlaintexts(t)
	f.checkBadDecryptionShares(t)
	f.checkBadKeys(t)
}

// malformedFixture is the test keys and the well-formed inputs each
// malformed one of TestExportedAPIRefusesMalformedInput is set beside:
// one ciphertext of 5, the first share's values for it and its decryption
// share.
type malformedFixture struct {
	tpk     *ThresholdPublicKey
	shares  []*KeyShare
	sk      *PrivateKey
	pk      *PublicKey
	good    *Ciphertext
	cs      []*Ciphertext
	vals    []*big.Int
	okShare *DecryptionShare
	nilC    *Ciphertext
}

func newMalformedFixture(t *testing.T) *malformedFixture {
	t.Helper()
	tpk, shares, sk := testKeys(t)
	pk := &tpk.PublicKey
	good := mustEnc(t, pk, big.NewInt(5))
	cs := []*Ciphertext{good}
	vals, err := shares[0].ShareValues(cs)
	if err != nil {
		t.Fatal(err)
	}
	okShare, err := shares[0].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		t.Fatal(err)
	}
	return &malformedFixture{tpk: tpk, shares: shares, sk: sk, pk: pk, good: good, cs: cs, vals: vals, okShare: okShare, nilC: &Ciphertext{}}
}

// checkBadKeyShares: key shares with a bad index or secret, or a missing
// or incomplete public key, make DecryptShare, ShareValues and ProveShare
// fail and MarshalBinary not panic.
func (f *malformedFixture) checkBadKeyShares(t *testing.T) {
	t.Helper()
	withSecret := func(x *big.Int) *KeyShare { return &KeyShare{Index: 1, Secret: x, Public: f.tpk} }
	withIndex := func(i int) *KeyShare { return &KeyShare{Index: i, Secret: f.shares[0].Secret, Public: f.tpk} }
	badKeyShares := map[string]*KeyShare{
		"nil key share":    nil,
		"nil public key":   {Index: 1, Secret: f.shares[0].Secret},
		"index 0":          withIndex(0),
		"index N+1":        withIndex(f.tpk.Parties + 1),
		"index −1":         withIndex(-1),
		"nil secret":       withSecret(nil),
		"zero secret":      withSecret(new(big.Int)),
		"negative secret":  withSecret(big.NewInt(-3)),
		"secret n^(s+1)/4": withSecret(new(big.Int).Rsh(f.tpk.NS1, 2)),
		"public key without V": {Index: 1, Secret: f.shares[0].Secret, Public: forgeThreshold(f.tpk, func(k *ThresholdPublicKey) {
			k.V = nil
		})},
		"public key with a nil v_i": {Index: 1, Secret: f.shares[0].Secret, Public: forgeThreshold(f.tpk, func(k *ThresholdPublicKey) {
			k.VerificationKeys[0] = nil
		})},
		"public key with too few v_i": {Index: 1, Secret: f.shares[0].Secret, Public: forgeThreshold(f.tpk, func(k *ThresholdPublicKey) {
			k.VerificationKeys = k.VerificationKeys[:1]
		})},
		"public key without NS1": {Index: 1, Secret: f.shares[0].Secret, Public: forgeThreshold(f.tpk, func(k *ThresholdPublicKey) {
			k.NS1 = nil
		})},
	}
	for name, ks := range badKeyShares {
		if err := noPanic(t, "DecryptShare/"+name, func() error {
			_, err := ks.DecryptShare(rand.Reader, f.cs, testCtx)
			return err
		}); err == nil {
			t.Errorf("DecryptShare with %s: no error", name)
		}
		if err := noPanic(t, "ShareValues/"+name, func() error { _, err := ks.ShareValues(f.cs); return err }); err == nil {
			t.Errorf("ShareValues with %s: no error", name)
		}
		if err := noPanic(t, "ProveShare/"+name, func() error {
			_, err := ks.ProveShare(rand.Reader, f.cs, f.vals, testCtx)
			return err
		}); err == nil {
			t.Errorf("ProveShare with %s: no error", name)
		}
		noPanic(t, "MarshalBinary/"+name, func() error { _, err := ks.MarshalBinary(); return err })
	}
}

// checkBadCiphertexts: nil, zero, negative or out-of-range ciphertexts, or
// none, are refused by every function that takes ciphertexts (Decrypt,
// Rerandomize and MarshalCiphertexts within the limits noted).
func (f *malformedFixture) checkBadCiphertexts(t *testing.T) {
	t.Helper()
	badCts := map[string][]*Ciphertext{
		"nil ciphertext": {nil},
		"nil C":          {f.nilC},
		"C = 0":          {{C: new(big.Int)}},
		"C = n^(s+1)":    {{C: new(big.Int).Set(f.tpk.NS1)}},
		"C negative":     {{C: big.NewInt(-1)}},
		"no ciphertexts": {},
	}
	for name, bad := range badCts {
		ks := f.shares[0]
		if err := noPanic(t, "DecryptShare/"+name, func() error {
			_, err := ks.DecryptShare(rand.Reader, bad, testCtx)
			return err
		}); err == nil {
			t.Errorf("DecryptShare with %s: no error", name)
		}
		if len(bad) > 0 {
			if err := noPanic(t, "ShareValues/"+name, func() error { _, err := ks.ShareValues(bad); return err }); err == nil {
				t.Errorf("ShareValues with %s: no error", name)
			}
		}
		if err := noPanic(t, "ProveShare/"+name, func() error {
			_, err := ks.ProveShare(rand.Reader, bad, f.vals[:len(bad)], testCtx)
			return err
		}); err == nil {
			t.Errorf("ProveShare with %s: no error", name)
		}
		if err := noPanic(t, "VerifyShare/"+name, func() error { return f.tpk.VerifyShare(bad, f.okShare, testCtx) }); err == nil {
			t.Errorf("VerifyShare with %s: no error", name)
		}
		if len(bad) > 0 {
			// (f.sk is another key than f.tpk: n^(s+1) of f.tpk is not out of
			// range for it.)
			if err := noPanic(t, "Decrypt/"+name, func() error { _, err := f.sk.Decrypt(bad[0]); return err }); err == nil && name != "C = n^(s+1)" {
				t.Errorf("Decrypt with %s: no error", name)
			}
			if err := noPanic(t, "Rerandomize/"+name, func() error { _, err := f.pk.Rerandomize(rand.Reader, bad[0]); return err }); err == nil && bad[0] != nil && bad[0].C != nil && bad[0].C.Sign() > 0 && bad[0].C.Cmp(f.tpk.NS1) < 0 {
				t.Errorf("Rerandomize with %s: no error", name)
			}
			if err := noPanic(t, "ValidateCiphertext/"+name, func() error { return f.pk.ValidateCiphertext(bad[0]) }); err == nil {
				t.Errorf("ValidateCiphertext with %s: no error", name)
			}
			// The encoder writes any value that fits (tests use it to build
			// hostile inputs); only a missing value is an error.
			if err := noPanic(t, "MarshalCiphertexts/"+name, func() error { _, err := f.pk.MarshalCiphertexts(bad); return err }); err == nil && (bad[0] == nil || bad[0].C == nil) {
				t.Errorf("MarshalCiphertexts with %s: no error", name)
			}
		}
	}
}

// checkNilOperands: the homomorphic operations have no error result: a nil
// operand gives a ciphertext that fails validation.
func (f *malformedFixture) checkNilOperands(t *testing.T) {
	t.Helper()
	invalid := func(name string, op func() *Ciphertext) {
		noPanic(t, name, func() error {
			if c := op(); f.pk.ValidateCiphertext(c) == nil {
				t.Errorf("%s returned a valid ciphertext", name)
			}
			return nil
		})
	}
	for _, c := range []*Ciphertext{nil, f.nilC} {
		invalid("Add(nil, c)", func() *Ciphertext { return f.pk.Add(c, f.good) })
		invalid("Add(c, nil)", func() *Ciphertext { return f.pk.Add(f.good, c) })
		invalid("Sub", func() *Ciphertext { return f.pk.Sub(f.good, c) })
		invalid("Neg", func() *Ciphertext { return f.pk.Neg(c) })
		invalid("AddPlain", func() *Ciphertext { return f.pk.AddPlain(c, one) })
		invalid("MulPlain", func() *Ciphertext { return f.pk.MulPlain(c, one) })
	}
	invalid("AddPlain(c, nil)", func() *Ciphertext { return f.pk.AddPlain(f.good, nil) })
	invalid("MulPlain(c, nil)", func() *Ciphertext { return f.pk.MulPlain(f.good, nil) })
}

// checkNilPlaintexts: nil plaintexts and values, and impossible packings,
// are refused (or decode to NaN or nil).
func (f *malformedFixture) checkNilPlaintexts(t *testing.T) {
	t.Helper()
	if err := noPanic(t, "Encrypt(nil)", func() error { _, err := f.pk.Encrypt(rand.Reader, nil); return err }); err == nil {
		t.Error("Encrypt(nil): no error")
	}
	if err := noPanic(t, "EncryptMany(nil)", func() error {
		_, err := f.pk.EncryptMany(rand.Reader, []*big.Int{one, nil})
		return err
	}); err == nil {
		t.Error("EncryptMany with a nil plaintext: no error")
	}
	if err := noPanic(t, "EncodeSigned(nil)", func() error { _, err := f.pk.EncodeSigned(nil); return err }); err == nil {
		t.Error("EncodeSigned(nil): no error")
	}
	noPanic(t, "FixedPoint.Decode(nil)", func() error {
		if x := (FixedPoint{FracBits: 8}).Decode(nil); !math.IsNaN(x) {
			t.Error("FixedPoint.Decode(nil) is not NaN")
		}
		return nil
	})
	if err := noPanic(t, "NewPacking(nil key)", func() error { _, err := NewPacking(nil, 8, 2); return err }); err == nil {
		t.Error("NewPacking with a nil key: no error")
	}
	if err := noPanic(t, "NewPacking(huge valueBits)", func() error { _, err := NewPacking(f.pk, 1<<40, 2); return err }); err == nil {
		t.Error("NewPacking with 2^40-bit values: no error")
	}
	if packing, err := NewPacking(f.pk, 8, 2); err == nil {
		if err := noPanic(t, "Pack(nil value)", func() error { _, err := packing.Pack([]*big.Int{one, nil}); return err }); err == nil {
			t.Error("Pack with a nil value: no error")
		}
		if err := noPanic(t, "Unpack(nil plaintext)", func() error { _, err := packing.Unpack([]*big.Int{nil}, 1, 1); return err }); err == nil {
			t.Error("Unpack with a nil plaintext: no error")
		}
	}
	noPanic(t, "DecodeSigned(nil)", func() error {
		if f.pk.DecodeSigned(nil) != nil {
			t.Error("DecodeSigned(nil) != nil")
		}
		return nil
	})
	if err := noPanic(t, "ProveShare(nil value)", func() error {
		_, err := f.shares[0].ProveShare(rand.Reader, f.cs, []*big.Int{nil}, testCtx)
		return err
	}); err == nil {
		t.Error("ProveShare with a nil value: no error")
	}
	if err := noPanic(t, "ProveShare(value 0)", func() error {
		_, err := f.shares[0].ProveShare(rand.Reader, f.cs, []*big.Int{new(big.Int)}, testCtx)
		return err
	}); err == nil {
		t.Error("ProveShare with value 0: no error")
	}
}

// checkBadDecryptionShares: decryption shares with nil values, indices 0
// and N+1, nil proofs or the wrong number of values fail verification, and
// Combine and MarshalBinary do not panic on them.
func (f *malformedFixture) checkBadDecryptionShares(t *testing.T) {
	t.Helper()
	shareWith := func(edit func(d *DecryptionShare)) *DecryptionShare {
		d := &DecryptionShare{Index: f.okShare.Index, Values: append([]*big.Int(nil), f.okShare.Values...), Proof: &Proof{E: f.okShare.Proof.E, Z: f.okShare.Proof.Z}}
		edit(d)
		return d
	}
	badShares := map[string]*DecryptionShare{
		"nil share":  nil,
		"nil value":  shareWith(func(d *DecryptionShare) { d.Values[0] = nil }),
		"index 0":    shareWith(func(d *DecryptionShare) { d.Index = 0 }),
		"index N+1":  shareWith(func(d *DecryptionShare) { d.Index = f.tpk.Parties + 1 }),
		"nil proof":  shareWith(func(d *DecryptionShare) { d.Proof = nil }),
		"nil E":      shareWith(func(d *DecryptionShare) { d.Proof.E = nil }),
		"nil Z":      shareWith(func(d *DecryptionShare) { d.Proof.Z = nil }),
		"no values":  shareWith(func(d *DecryptionShare) { d.Values = nil }),
		"two values": shareWith(func(d *DecryptionShare) { d.Values = append(d.Values, d.Values[0]) }),
	}
	for name, d := range badShares {
		if err := noPanic(t, "VerifyShare/"+name, func() error { return f.tpk.VerifyShare(f.cs, d, testCtx) }); err == nil {
			t.Errorf("VerifyShare with %s: no error", name)
		}
		noPanic(t, "Combine/"+name, func() error {
			_, err := f.tpk.Combine(f.cs, []*DecryptionShare{d, f.okShare})
			return err
		})
		if d != nil {
			noPanic(t, "DecryptionShare.MarshalBinary/"+name, func() error { _, err := d.MarshalBinary(); return err })
		}
	}
}

// checkBadKeys: nil factors and nil or malformed public keys are refused.
func (f *malformedFixture) checkBadKeys(t *testing.T) {
	t.Helper()
	for name, call := range map[string]func() error{
		"NewPrivateKey(nil, q)": func() error { _, err := NewPrivateKey(rand.Reader, nil, f.sk.Q, 1); return err },
		"NewPrivateKey(p, nil)": func() error { _, err := NewPrivateKey(rand.Reader, f.sk.P, nil, 1); return err },
		"NewPublicKey(nil n)":   func() error { _, err := NewPublicKey(rand.Reader, nil, 1, nil); return err },
		"DealThresholdFromPrimes(nil)": func() error {
			_, _, err := DealThresholdFromPrimes(rand.Reader, nil, nil, 1, 3, 1)
			return err
		},
		"Decrypt without factors": func() error {
			_, err := (&PrivateKey{PublicKey: f.sk.PublicKey}).Decrypt(f.good)
			return err
		},
		"Encrypt under a nil key": func() error {
			var k *PublicKey
			_, err := k.Encrypt(rand.Reader, one)
			return err
		},
		"Encrypt under a key without N": func() error { _, err := (&PublicKey{}).Encrypt(rand.Reader, one); return err },
		"VerifyShare under a nil key": func() error {
			var k *ThresholdPublicKey
			return k.VerifyShare(f.cs, f.okShare, testCtx)
		},
		"Combine under a key without V": func() error {
			_, err := forgeThreshold(f.tpk, func(k *ThresholdPublicKey) { k.V = nil }).Combine(f.cs, []*DecryptionShare{f.okShare})
			return err
		},
		"Check on a nil key": func() error { var k *ThresholdPublicKey; return k.Check() },
		"GenerateSafePrime(nil ctx, 8 bits)": func() error {
			//lint:ignore SA1012 a nil context is the malformed input under test
			_, err := GenerateSafePrime(nil, rand.Reader, 8) //nolint:staticcheck
			return err
		},
		"GenerateSafePrime(4096 bits)": func() error {
			_, err := GenerateSafePrime(t.Context(), rand.Reader, 4096)
			return err
		},
	} {
		if err := noPanic(t, name, call); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// TestSafePrimeNilContext: a nil context means no deadline, not a panic.
func TestSafePrimeNilContext(t *testing.T) {
	//lint:ignore SA1012 a nil context is what is tested
	p, err := GenerateSafePrime(nil, rand.Reader, 64) //nolint:staticcheck
	if err != nil || p.BitLen() != 64 {
		t.Fatalf("%v %v", p, err)
	}
}

// TestParallelReraisesPanics: a panic inside a worker reaches the caller's
// goroutine, where it can be recovered, instead of killing the process.
func TestParallelReraisesPanics(t *testing.T) {
	defer func() {
		if r := recover(); r == nil {
			t.Fatal("panic lost")
		}
	}()
	parallel(8, func(i int) {
		if i == 5 {
			panic("worker 5")
		}
	})
}
