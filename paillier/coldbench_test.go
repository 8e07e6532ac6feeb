package paillier

import (
	"crypto/rand"
	"fmt"
	"math/big"
	"testing"
)

// dropTables empties the fixed-base table cache, as in a fresh process.
func dropTables() { SetFixedBaseBudget(SetFixedBaseBudget(0)) }

// BenchmarkColdEncrypt2048 is what a fresh process pays for its first n
// encryptions with a 2048-bit key, the fixed-base tables included: each
// iteration starts from an empty table cache. n=10 and n=100 are the few
// encryptions of a short job (cohort demo makes 87 in all); n=1000 is a key
// in heavy use, one Encrypt after another; ColdEncryptMany2048 is the same
// as one batch. ns/enc is the cost per encryption. It uses only the public
// API, so that it runs unchanged on older trees (scripts/bench-ab.sh).
func BenchmarkColdEncrypt2048(b *testing.B) {
	k := fullKey(b, 2048)
	pk := &k.sk.PublicKey
	m := big.NewInt(42)
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dropTables()
				b.StartTimer()
				for i := 0; i < n; i++ {
					if _, err := pk.Encrypt(rand.Reader, m); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/enc")
		})
	}
}

func BenchmarkColdEncryptMany2048(b *testing.B) {
	k := fullKey(b, 2048)
	pk := &k.sk.PublicKey
	ms := make([]*big.Int, 1000)
	for i := range ms {
		ms[i] = big.NewInt(int64(i))
	}
	for b.Loop() {
		b.StopTimer()
		dropTables()
		b.StartTimer()
		if _, err := pk.EncryptMany(rand.Reader, ms); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*len(ms)), "ns/enc")
}

// BenchmarkColdShares2048 is a fresh process's first n decryptions by one
// party: for each, a decryption share with its proof and the verification
// of it (two exponentiations of v), the v tables included.
func BenchmarkColdShares2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 1)
	for _, n := range []int{1, 10} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				dropTables()
				b.StartTimer()
				for i := 0; i < n; i++ {
					d, err := k.shares[0].DecryptShare(rand.Reader, cs, testCtx)
					if err != nil {
						b.Fatal(err)
					}
					if err := k.tpk.VerifyShare(cs, d, testCtx); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
