package boost_test

import (
	"crypto/rand"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/paillier"
)

func paillierCrypto(t testing.TB, bits int, rows uint64) boost.Crypto {
	t.Helper()
	sk, err := paillier.GenerateKey(rand.Reader, bits)
	if err != nil {
		t.Fatal(err)
	}
	pool, err := paillier.NewRandomizerPool(t.Context(), &sk.PublicKey, nil, 4096)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	c, err := boost.PaillierCrypto(&sk.PublicKey, pool, rows, sk.Decrypt)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestPaillierEqualsPlain: with the sums that cross edges packed and
// encrypted, the model is the one in the clear (and so the reference's).
func TestPaillierEqualsPlain(t *testing.T) {
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
// all with N = 1; docs/boost.md).
func TestCreditPaillierTime(t *testing.T) {
	every, _ := strconv.Atoi(os.Getenv("BOOST_PAILLIER"))
	if every < 1 {
		t.Skip("BOOST_PAILLIER=N to measure")
	}
	g, train, _ := creditData(t, every)
	p := boost.DefaultParams()
	p.Trees = 1
	c := paillierCrypto(t, 2048, 1<<15)
	t0 := time.Now()
	if _, err := boost.TrainWith(g, train, p, c); err != nil {
		t.Fatal(err)
	}
	t.Logf("default_credit, %d training rows, depth %d: %v per tree with 2048-bit Paillier (packed, pooled randomisers, one process)", train["guest"].NumRows(), p.MaxDepth, (time.Since(t0) / time.Duration(p.Trees)).Round(time.Millisecond))
}
