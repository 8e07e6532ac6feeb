package bench

import (
	"crypto/rand"
	"math/big"
	"testing"

	"github.com/cohortdm/cohort/paillier"
	"github.com/niclabs/tcpaillier"
)

// Cross-implementation known-answer tests on one modulus (1024-bit n):
// tcpaillier ciphertexts decrypt under our threshold key and ours under
// theirs, because both use (1+n)^m·r^n mod n² (DJ with s = 1).
func TestCrossDecrypt(t *testing.T) {
	k := getKeys(t, 1024)
	for _, v := range []int64{0, 1, 42, 1 << 40} {
		m := big.NewInt(v)
		// Theirs → ours.
		tc, _, err := k.tcPK.Encrypt(m)
		if err != nil {
			t.Fatal(err)
		}
		cs := []*paillier.Ciphertext{{C: tc}}
		var ds []*paillier.DecryptionShare
		for _, ks := range k.shares[2:] {
			d, err := ks.DecryptShare(rand.Reader, cs, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := k.tpk.VerifyShare(cs, d, ctx); err != nil {
				t.Fatal(err)
			}
			ds = append(ds, d)
		}
		got, err := k.tpk.Combine(cs, ds)
		if err != nil || got[0].Cmp(m) != 0 {
			t.Fatalf("theirs→ours: %v %v want %v", got, err, m)
		}
		// Ours → theirs (and our plain CRT decryption agrees).
		oc, err := k.tpk.Encrypt(rand.Reader, m)
		if err != nil {
			t.Fatal(err)
		}
		var tds []*tcpaillier.DecryptionShare
		for _, ks := range k.tcKS[:3] {
			d, err := ks.PartialDecrypt(oc.C)
			if err != nil {
				t.Fatal(err)
			}
			tds = append(tds, d)
		}
		dec, err := k.tcPK.CombineShares(tds...)
		if err != nil || dec.Cmp(m) != 0 {
			t.Fatalf("ours→theirs: %v %v want %v", dec, err, m)
		}
		if d, err := k.sk.Decrypt(&paillier.Ciphertext{C: tc}); err != nil || d.Cmp(m) != 0 {
			t.Fatalf("CRT decrypt of theirs: %v %v", d, err)
		}
	}
}

// TestTcpaillierProofLeaksShare reproduces tcpaillier v0.0.7's share leak
// (its proof's blinder has about 262 bits, so the estimate floor(z/(e·Δ))
// is within a few units of s_i) and
// shows that the same estimator is useless against our proofs.
func TestTcpaillierProofLeaksShare(t *testing.T) {
	k := getKeys(t, 1024)
	c, _, _ := k.tcPK.Encrypt(big.NewInt(5))
	_, zk, err := k.tcKS[0].PartialDecryptWithProof(c)
	if err != nil {
		t.Fatal(err)
	}
	ed := new(big.Int).Mul(zk.E, k.tcPK.Delta)
	est := new(big.Int).Quo(zk.Z, ed)
	diff := new(big.Int).Sub(k.tcKS[0].Si, est)
	if diff.CmpAbs(big.NewInt(1<<16)) > 0 {
		t.Fatalf("expected tcpaillier's proof to leak the share; diff has %d bits", diff.BitLen())
	}
	t.Logf("tcpaillier: s_i - floor(z/(e·Δ)) = %v", diff)

	cs := []*paillier.Ciphertext{{C: c}}
	d, err := k.shares[0].DecryptShare(rand.Reader, cs, ctx)
	if err != nil {
		t.Fatal(err)
	}
	ourEst := new(big.Int).Quo(d.Proof.Z, d.Proof.E)
	ourDiff := new(big.Int).Sub(k.shares[0].Secret, ourEst)
	if ourDiff.BitLen() < k.shares[0].Secret.BitLen()+64 {
		t.Fatalf("our estimate is within 2^%d of the share", ourDiff.BitLen())
	}
	t.Logf("cohort: |x - floor(z/e)| has %d bits, the share %d bits", ourDiff.BitLen(), k.shares[0].Secret.BitLen())
}
