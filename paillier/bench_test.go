package paillier

import (
	"context"
	"crypto/rand"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// Benchmarks use full-size keys built from safe primes cached under
// os.TempDir() (generated on first use, never committed). Run them on one
// core:
//
//	go test -run '^$' -bench . -cpu 1 ./paillier/

var (
	benchMu   sync.Mutex
	benchKeys = map[int]*benchKey{}
)

type benchKey struct {
	sk     *PrivateKey
	tpk    *ThresholdPublicKey
	shares []*KeyShare
}

// cachedSafePrimes returns two safe primes of bits bits, from the cache
// file or freshly generated. It is paillertest.SafePrimes, which this
// package's own tests cannot import (paillertest imports paillier).
func cachedSafePrimes(tb testing.TB, bits int) (*big.Int, *big.Int) {
	path := filepath.Join(os.TempDir(), fmt.Sprintf("cohort-paillier-safeprimes-%d.txt", bits))
	if b, err := os.ReadFile(path); err == nil {
		f := strings.Fields(string(b))
		if len(f) == 2 {
			p, ok1 := new(big.Int).SetString(f[0], 16)
			q, ok2 := new(big.Int).SetString(f[1], 16)
			if ok1 && ok2 && p.BitLen() == bits && q.BitLen() == bits && p.ProbablyPrime(10) && q.ProbablyPrime(10) {
				return p, q
			}
		}
	}
	p, err := GenerateSafePrime(context.Background(), rand.Reader, bits)
	if err != nil {
		tb.Fatal(err)
	}
	var q *big.Int
	for q == nil || q.Cmp(p) == 0 {
		if q, err = GenerateSafePrime(context.Background(), rand.Reader, bits); err != nil {
			tb.Fatal(err)
		}
	}
	_ = os.WriteFile(path, []byte(p.Text(16)+"\n"+q.Text(16)+"\n"), 0o600)
	return p, q
}

// fullKey returns a threshold key (N = 5, t = 2) and a plain private key
// on the same safe-prime modulus of bits bits.
func fullKey(b *testing.B, bits int) *benchKey {
	benchMu.Lock()
	defer benchMu.Unlock()
	if k, ok := benchKeys[bits]; ok {
		return k
	}
	p, q := cachedSafePrimes(b, bits/2)
	tpk, shares, err := DealThresholdFromPrimes(rand.Reader, p, q, 1, 5, 2)
	if err != nil {
		b.Fatal(err)
	}
	sk, err := NewPrivateKey(rand.Reader, p, q, 1)
	if err != nil {
		b.Fatal(err)
	}
	k := &benchKey{sk: sk, tpk: tpk, shares: shares}
	benchKeys[bits] = k
	return k
}

func benchCiphertexts(b *testing.B, pk *PublicKey, n int) []*Ciphertext {
	cs := make([]*Ciphertext, n)
	for i := range cs {
		cs[i] = mustEnc(b, pk, big.NewInt(int64(1000+i)))
	}
	return cs
}

func benchEncrypt(b *testing.B, bits int, short bool) {
	k := fullKey(b, bits)
	pk := k.sk.PublicKey
	pk.ShortExponent = short
	pk.precomputeH() // the steady state of a key in heavy use
	m := randPlain(b, &pk)
	b.ResetTimer()
	for b.Loop() {
		if _, err := pk.Encrypt(rand.Reader, m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncrypt2048(b *testing.B)      { benchEncrypt(b, 2048, false) }
func BenchmarkEncrypt2048Short(b *testing.B) { benchEncrypt(b, 2048, true) }
func BenchmarkEncrypt3072(b *testing.B)      { benchEncrypt(b, 3072, false) }
func BenchmarkEncrypt3072Short(b *testing.B) { benchEncrypt(b, 3072, true) }

// benchEncryptPool measures a RandomizerPool of one randomiser: each
// iteration waits until the filler has one ready, then encrypts. ns/op is
// the whole cycle, the filler's exponentiation included (on the same core
// under -cpu 1): the sustained cost, as for Encrypt. ns/critical-op is the
// Encrypt call alone: what a caller waits for when a randomiser is ready,
// i.e. on a protocol's critical path after idle time.
func benchEncryptPool(b *testing.B, bits int, short bool) {
	k := fullKey(b, bits)
	pk := k.sk.PublicKey
	pk.ShortExponent = short
	pk.Precompute()
	m := randPlain(b, &pk)
	p, err := NewRandomizerPool(context.Background(), &pk, rand.Reader, 1)
	if err != nil {
		b.Fatal(err)
	}
	defer p.Close()
	var critical time.Duration
	b.ResetTimer()
	for b.Loop() {
		for p.Ready() == 0 {
			time.Sleep(20 * time.Microsecond)
		}
		t0 := time.Now()
		if _, err := p.Encrypt(m); err != nil {
			b.Fatal(err)
		}
		critical += time.Since(t0)
	}
	b.ReportMetric(float64(critical.Nanoseconds())/float64(b.N), "ns/critical-op")
}

func BenchmarkEncrypt2048Pool(b *testing.B) { benchEncryptPool(b, 2048, false) }
func BenchmarkEncrypt3072Pool(b *testing.B) { benchEncryptPool(b, 3072, false) }

// BenchmarkEncrypt2048Textbook is (1+n)^m·r^n with a plain exponentiation,
// for reference.
func BenchmarkEncrypt2048Textbook(b *testing.B) {
	k := fullKey(b, 2048)
	pk := &PublicKey{N: k.sk.N}
	m := randPlain(b, pk)
	for b.Loop() {
		if _, err := pk.Encrypt(rand.Reader, m); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEncryptMany2048 encrypts 64 values with all cores (run with
// -cpu 1,2 to see the scaling); the metric is per value.
func BenchmarkEncryptMany2048(b *testing.B) {
	k := fullKey(b, 2048)
	pk := &k.sk.PublicKey
	pk.precomputeH()
	ms := make([]*big.Int, 64)
	for i := range ms {
		ms[i] = big.NewInt(int64(i))
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := pk.EncryptMany(rand.Reader, ms); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/64, "ns/value")
}

func BenchmarkPrecompute2048(b *testing.B) {
	k := fullKey(b, 2048)
	for b.Loop() {
		newFixedBase(k.sk.H, k.sk.NS1, k.sk.randBits(), k.sk.encWindow())
	}
}

func benchAdd(b *testing.B, bits int) {
	k := fullKey(b, bits)
	pk := &k.sk.PublicKey
	cs := benchCiphertexts(b, pk, 2)
	for t0 := time.Now(); time.Since(t0) < 300*time.Millisecond; {
		pk.Add(cs[0], cs[1]) // warm up: see bench/tcpaillier's warm
	}
	b.ResetTimer()
	for b.Loop() {
		pk.Add(cs[0], cs[1])
	}
}

func BenchmarkAdd2048(b *testing.B) { benchAdd(b, 2048) }
func BenchmarkAdd3072(b *testing.B) { benchAdd(b, 3072) }

func BenchmarkMulPlain2048(b *testing.B) {
	k := fullKey(b, 2048)
	pk := &k.sk.PublicKey
	c := benchCiphertexts(b, pk, 1)[0]
	s := new(big.Int).Lsh(one, 63)
	for b.Loop() {
		pk.MulPlain(c, s)
	}
}

func benchDecrypt(b *testing.B, bits int) {
	k := fullKey(b, bits)
	c := benchCiphertexts(b, &k.sk.PublicKey, 1)[0]
	for b.Loop() {
		if _, err := k.sk.Decrypt(c); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDecrypt2048(b *testing.B) { benchDecrypt(b, 2048) }
func BenchmarkDecrypt3072(b *testing.B) { benchDecrypt(b, 3072) }

// BenchmarkDecryptShare2048 is the decryption share c^(2Δs_i) alone.
func benchShare(b *testing.B, bits int) {
	k := fullKey(b, bits)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 1)
	for b.Loop() {
		k.shares[0].shareValues(cs)
	}
}

func BenchmarkDecryptShare2048(b *testing.B) { benchShare(b, 2048) }
func BenchmarkDecryptShare3072(b *testing.B) { benchShare(b, 3072) }

// BenchmarkShareProof2048 is the proof for one share alone (the extra cost
// of a verifiable share).
func BenchmarkShareProof2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 1)
	vals := k.shares[0].shareValues(cs)
	k.tpk.precomputeV() // build the wide v table outside the timing
	b.ResetTimer()
	for b.Loop() {
		rho, _ := randomBits(rand.Reader, k.tpk.rhoBits())
		k.shares[0].prove(rho, cs, vals, testCtx)
	}
}

// BenchmarkDecryptShareWithProof2048 is DecryptShare for one ciphertext.
func BenchmarkDecryptShareWithProof2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 1)
	k.tpk.precomputeV()
	b.ResetTimer()
	for b.Loop() {
		if _, err := k.shares[0].DecryptShare(rand.Reader, cs, testCtx); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifyShare2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 1)
	d, err := k.shares[0].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		b.Fatal(err)
	}
	k.tpk.precomputeV()
	b.ResetTimer()
	for b.Loop() {
		if err := k.tpk.VerifyShare(cs, d, testCtx); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkBatchProof16x2048 is one batched proof over 16 ciphertexts
// (excluding the 16 share exponentiations); ns/ct is the amortised cost.
func BenchmarkBatchProof16x2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 16)
	vals := k.shares[0].shareValues(cs)
	k.tpk.precomputeV()
	b.ResetTimer()
	for b.Loop() {
		rho, _ := randomBits(rand.Reader, k.tpk.rhoBits())
		k.shares[0].prove(rho, cs, vals, testCtx)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/16, "ns/ct")
}

// BenchmarkBatchVerify16x2048 verifies a 16-ciphertext share.
func BenchmarkBatchVerify16x2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 16)
	d, err := k.shares[0].DecryptShare(rand.Reader, cs, testCtx)
	if err != nil {
		b.Fatal(err)
	}
	k.tpk.precomputeV()
	b.ResetTimer()
	for b.Loop() {
		if err := k.tpk.VerifyShare(cs, d, testCtx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/16, "ns/ct")
}

// BenchmarkCombine3of5x2048 combines t+1 = 3 shares (N = 5) for one
// ciphertext.
func BenchmarkCombine3of5x2048(b *testing.B) {
	k := fullKey(b, 2048)
	cs := benchCiphertexts(b, &k.tpk.PublicKey, 1)
	var ds []*DecryptionShare
	for _, ks := range k.shares[:3] {
		ds = append(ds, &DecryptionShare{Index: ks.Index, Values: ks.shareValues(cs)})
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := k.tpk.Combine(cs, ds); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSafePrime1024 generates one 1024-bit safe prime per iteration;
// use -benchtime 1x -count 10 and benchstat for the median.
func BenchmarkSafePrime1024(b *testing.B) {
	for b.Loop() {
		if _, err := GenerateSafePrime(context.Background(), rand.Reader, 1024); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFixedBaseMemory reports the memory one fixed-base table adds
// (the live heap, runtime.MemStats after a full collection, plus what it
// maps outside the heap) as MiB/table, for the
// encryption tables (full and short r) and the v table. Run it with
// -benchtime 1x: each iteration builds a table.
func BenchmarkFixedBaseMemory(b *testing.B) {
	for _, c := range []struct {
		name string
		bits int
		tab  func(k *benchKey) (g, m *big.Int, bits, w int)
	}{
		{"H/2048", 2048, func(k *benchKey) (*big.Int, *big.Int, int, int) {
			return k.sk.H, k.sk.NS1, k.sk.randBits(), k.sk.encWindow()
		}},
		{"H/2048short", 2048, func(k *benchKey) (*big.Int, *big.Int, int, int) {
			pk := k.sk.PublicKey
			pk.ShortExponent = true
			return pk.H, pk.NS1, pk.randBits(), pk.encWindow()
		}},
		{"V/2048", 2048, func(k *benchKey) (*big.Int, *big.Int, int, int) {
			return k.tpk.V, k.tpk.NS1, k.tpk.rhoBits() + 1, vWindow
		}},
		{"H/3072", 3072, func(k *benchKey) (*big.Int, *big.Int, int, int) {
			return k.sk.H, k.sk.NS1, k.sk.randBits(), k.sk.encWindow()
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			g, m, bits, w := c.tab(fullKey(b, c.bits))
			var total float64
			for b.Loop() {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				mapped := MappedFixedBaseBytes()
				fb := newFixedBase(g, m, bits, w)
				runtime.GC()
				runtime.ReadMemStats(&after)
				mapped = MappedFixedBaseBytes() - mapped
				runtime.KeepAlive(fb)
				total += float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)+mapped) / (1 << 20)
			}
			b.ReportMetric(total/float64(b.N), "MiB/table")
		})
	}
}

// BenchmarkLargestKeyShareCheck is the worst a key the decoders accept can
// cost a verifier (its name keeps it out of -bench Verify): n of 4096 bits
// with s = 3 (n^(s+1) of MaxCiphertextBits), random squares for v and the
// v_i (the decoder cannot tell them from a dealer's), and a garbage share
// with the longest z the decoder allows. The first VerifyShare builds the
// v table (now the small one: at this size a 3-bit wide table would save
// nothing over it, so none is ever built); MiB/table is the heap it keeps
// and s/cached-call the time of a later call that reuses the table. Before the size policy and the table
// cap, an 8192-bit key made one such call take 8.5 s and 816 MiB. Run with
// -benchtime 1x.
func BenchmarkLargestKeyShareCheck(b *testing.B) {
	var p, q *big.Int
	for n := new(big.Int); n.BitLen() != 4096; n.Mul(p, q) {
		p, _ = rand.Prime(rand.Reader, 2048)
		q, _ = rand.Prime(rand.Reader, 2048)
	}
	n := new(big.Int).Mul(p, q)
	pub, err := NewPublicKey(rand.Reader, n, 3, nil)
	if err != nil {
		b.Fatal(err)
	}
	square := func() *big.Int {
		x, _ := randomUnit(rand.Reader, pub.NS1)
		return x.Mod(x.Mul(x, x), pub.NS1)
	}
	tpk := &ThresholdPublicKey{PublicKey: *pub, Parties: 3, Threshold: 1, V: square()}
	for range tpk.Parties {
		tpk.VerificationKeys = append(tpk.VerificationKeys, square())
	}
	tpk.KeyID = tpk.computeKeyID()
	kb, err := tpk.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	if tpk, err = UnmarshalThresholdPublicKey(kb); err != nil {
		b.Fatal(err)
	}
	cs := []*Ciphertext{{C: square()}}
	z, _ := randomBits(rand.Reader, tpk.rhoBits()+1)
	sh := &DecryptionShare{Index: 1, Values: []*big.Int{square()}, Proof: &Proof{E: big.NewInt(12345), Z: z}}
	var mib float64
	for b.Loop() {
		// Drop the cached tables so that every iteration builds the v table.
		SetFixedBaseBudget(SetFixedBaseBudget(0))
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		if err := tpk.VerifyShare(cs, sh, testCtx); err == nil {
			b.Fatal("garbage share verified")
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		mib += float64(int64(after.HeapAlloc)-int64(before.HeapAlloc)) / (1 << 20)
	}
	b.ReportMetric(mib/float64(b.N), "MiB/table")
	// Once the table exists, a verification costs this much.
	t0 := time.Now()
	tpk.VerifyShare(cs, sh, testCtx)
	b.ReportMetric(time.Since(t0).Seconds(), "s/cached-call")
}

// BenchmarkUnmarshalThresholdPublicKey2048 decodes and checks a 2048-bit
// key with N = 5: the modulus checks (sieve gcd, perfect powers,
// primality) and the order checks of H, v and the five v_i.
func BenchmarkUnmarshalThresholdPublicKey2048(b *testing.B) {
	k := fullKey(b, 2048)
	kb, err := k.tpk.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := UnmarshalThresholdPublicKey(kb); err != nil {
			b.Fatal(err)
		}
	}
}
