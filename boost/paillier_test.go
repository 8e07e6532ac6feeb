package boost_test

import (
	"crypto/rand"
	"math/big"
	"os"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/paillier"
)

func paillierCrypto(t testing.TB, bits int, rows uint64) boost.Crypto {
	t.Helper()
	return paillierCryptoPool(t, bits, rows, 4096)
}

func paillierCryptoPool(t testing.TB, bits int, rows uint64, size int) boost.Crypto {
	t.Helper()
	c, _ := countingCrypto(t, bits, rows, size)
	return c
}

// countingCrypto is paillierCryptoPool's crypto with the count of its
// decryptions.
func countingCrypto(t testing.TB, bits int, rows uint64, size int) (boost.Crypto, *atomic.Int64) {
	t.Helper()
	sk, err := paillier.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := paillier.NewRandomizerPool(t.Context(), &sk.PublicKey, nil, size)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	n := new(atomic.Int64)
	dec := func(c *paillier.Ciphertext) (*big.Int, error) {
		n.Add(1)
		return sk.Decrypt(c)
	}
	c, err := boost.PaillierCrypto(&sk.PublicKey, pool, rows, dec)
	if err != nil {
		t.Fatal(err)
	}
	return c, n
}

// TestPaillierEqualsPlain: with the sums that cross edges packed and
// encrypted, the model is the one in the clear (and so the reference's).
func TestPaillierEqualsPlain(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 1, 60)
	p := testParams()
	p.Trees = 2
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	got, err := boost.TrainWith(c.g, c.data, p, paillierCrypto(t, 2048, 1<<16))
	if err != nil {
		t.Fatal(err)
	}
	if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
		t.Fatalf("encrypted model differs\n got: %s\nwant: %s", a, b)
	}
}

// TestCreditPaillierTime logs the time of one tree on default_credit with
// 2048-bit keys (BOOST_PAILLIER=N: the training ids with id mod N = 1,
// all with N = 1; BOOST_REUSE=0 encrypts every entry at every level;
// BOOST_TREES trees, 1 by default; BOOST_COMPRESS=0 decrypts bin by bin;
// BOOST_POOL randomisers pooled, one
// tree's rows by default; docs/boost.md): wall time, and the process's
// CPU time over the training (every goroutine: the sealing workers and
// the randomiser pool's filler, whose randomisers left over at the end
// count too).
func TestCreditPaillierTime(t *testing.T) {
	every, _ := strconv.Atoi(os.Getenv("BOOST_PAILLIER"))
	if every < 1 {
		t.Skip("BOOST_PAILLIER=N to measure")
	}
	g, train, _ := creditData(t, every)
	p := boost.DefaultParams()
	p.Trees = 1
	if v, err := strconv.Atoi(os.Getenv("BOOST_TREES")); err == nil {
		p.Trees = v
	}
	p.Reuse = os.Getenv("BOOST_REUSE") != "0"
	rows := train["guest"].NumRows()
	pool := rows
	if v, err := strconv.Atoi(os.Getenv("BOOST_POOL")); err == nil && v > 0 {
		pool = v
	}
	c, decs := countingCrypto(t, 2048, 1<<15, pool)
	if os.Getenv("BOOST_COMPRESS") == "0" {
		c.OpenBins = nil // bin by bin, as before compress.go
	}
	cpu0, t0 := cpuTime(t), time.Now()
	if _, err := boost.TrainWith(g, train, p, c); err != nil {
		t.Fatal(err)
	}
	wall, cpu := time.Since(t0)/time.Duration(p.Trees), (cpuTime(t)-cpu0)/time.Duration(p.Trees)
	t.Logf("default_credit, %d training rows, depth %d, re-use %v, compressed bins %v: %v per tree, CPU %v per tree, %d decryptions per tree, with 2048-bit Paillier (packed, pooled randomisers, one process)",
		rows, p.MaxDepth, p.Reuse, c.OpenBins != nil, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), decs.Load()/int64(p.Trees))
}

// cpuTime is the process's user and system CPU time so far.
func cpuTime(t testing.TB) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
