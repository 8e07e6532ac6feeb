package paillier

import (
	"crypto/rand"
	"math/big"
	"sync"
	"testing"
)

// Test keys are small (512-bit n) so that the suite stays fast; full-size
// keys are exercised by the benchmarks. Such keys are refused unless the
// test binary opts in.
const testBits = 512

func init() {
	if err := AllowTestKeySizes(); err != nil {
		panic(err)
	}
}

var (
	testKeyOnce sync.Once
	testTPK     *ThresholdPublicKey
	testShares  []*KeyShare
	testSK      *PrivateKey
	testSK2     *PrivateKey
)

func testKeys(tb testing.TB) (*ThresholdPublicKey, []*KeyShare, *PrivateKey) {
	tb.Helper()
	testKeyOnce.Do(func() {
		var err error
		testTPK, testShares, err = DealThreshold(rand.Reader, testBits, 5, 2)
		if err != nil {
			panic(err)
		}
		if testSK, err = GenerateKey(rand.Reader, testBits); err != nil {
			panic(err)
		}
		if testSK2, err = GenerateKeyDJ(rand.Reader, testBits, 2); err != nil {
			panic(err)
		}
	})
	return testTPK, testShares, testSK
}

func randPlain(tb testing.TB, pk *PublicKey) *big.Int {
	m, err := rand.Int(rand.Reader, pk.PlaintextModulus())
	if err != nil {
		tb.Fatal(err)
	}
	return m
}

func mustEnc(tb testing.TB, pk *PublicKey, m *big.Int) *Ciphertext {
	tb.Helper()
	c, err := pk.Encrypt(rand.Reader, m)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
