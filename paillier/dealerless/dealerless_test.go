package dealerless

import (
	"context"
	"crypto/sha3"
	"errors"
	"fmt"
	"io"
	"math/big"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
)

func init() { testkit.SmallKeys() }

// generateAll runs n parties in process and returns their results.
func generateAll(t *testing.T, n, bits int) ([]*Result, *memNet) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	net := newMemNet(n)
	res := make([]*Result, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := 1; i <= n; i++ {
		go func(i int) {
			cfg := Config{Bits: bits, Parties: n, Index: i, PublicSeed: []byte("test seed"), Batch: 256}
			res[i-1], errs[i-1] = Generate(ctx, cfg, &memEnd{m: net, self: i})
			if errs[i-1] != nil {
				cancel()
			}
			done <- i
		}(i)
	}
	for range n {
		<-done
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("party %d: %v", i+1, err)
		}
	}
	return res, net
}

func TestGenerate3(t *testing.T) { testGenerate(t, 3, 512) }

func testGenerate(t *testing.T, n, bits int) {
	res, net := generateAll(t, n, bits)
	pub := res[0].Share.Public
	p, q := new(big.Int), new(big.Int)
	for i, r := range res {
		if r.Share.Public.KeyID != pub.KeyID {
			t.Fatalf("party %d has another key", i+1)
		}
		p.Add(p, r.p)
		q.Add(q, r.q)
	}
	t.Logf("n=%d bits=%d candidates=%d timing=%v bytes=%d", n, bits, res[0].Candidates, res[0].Timing, net.bytes[0].Load())
	if new(big.Int).Mul(p, q).Cmp(pub.N) != 0 || !p.ProbablyPrime(30) || !q.ProbablyPrime(30) {
		t.Fatalf("N is not the product of the reconstructed primes")
	}
}

// TestGenerateFull generates a full-size key in process when
// COHORT_KEYGEN_FULL=N (parties) is set: the figure docs/keygen.md quotes
// without the network.
func TestGenerateFull(t *testing.T) {
	v := os.Getenv("COHORT_KEYGEN_FULL")
	if v == "" {
		t.Skip("set COHORT_KEYGEN_FULL=3 (parties) to generate a 2048-bit key")
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	testGenerate(t, n, 2048)
	t.Logf("total %v", time.Since(start))
}

func TestGenerate5(t *testing.T) { testGenerate(t, 5, 512) }

// TestTamperedMessage: a party whose message in a round has the wrong
// length or an element out of range makes every receiver fail, naming it;
// nobody returns a key.
func TestTamperedMessage(t *testing.T) {
	for _, round := range []string{"sv/0/a", "sv/0/m1", "sv/0/z", "cand/0", "prod/0", "finish/c1", "finish/c4", "finish/vk"} {
		t.Run(strings.ReplaceAll(round, "/", "-"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			net := newMemNet(3)
			net.tamper = func(r string, from, to int, b []byte) []byte {
				if r == round && from == 2 {
					return append(b, 0)
				}
				return b
			}
			errs := make([]error, 3)
			done := make(chan int)
			for i := 1; i <= 3; i++ {
				go func(i int) {
					cfg := Config{Bits: 512, Parties: 3, Index: i, PublicSeed: []byte("tamper"), Batch: 64}
					_, errs[i-1] = Generate(ctx, cfg, &memEnd{m: net, self: i})
					if errs[i-1] != nil {
						cancel() // a real node's peers see the step fail
					}
					done <- i
				}(i)
			}
			for range 3 {
				<-done
			}
			// Whoever reads the bad message fails naming party 2; the
			// others stop when the step is cancelled; nobody has a key.
			named := false
			for i, err := range errs {
				switch {
				case err == nil:
					t.Fatalf("party %d returned a key", i+1)
				case strings.Contains(err.Error(), "party 2"):
					named = true
				case !errors.Is(err, context.Canceled):
					t.Fatalf("party %d: %v", i+1, err)
				}
			}
			if !named {
				t.Fatalf("no party named party 2: %v", errs)
			}
		})
	}
}

// detReader is a deterministic byte stream (SHAKE-256 of a label), for the
// known-answer test only.
func detReader(label string) io.Reader {
	x := sha3.NewSHAKE256()
	x.Write([]byte(label))
	return x
}

// TestKnownAnswer pins the whole protocol: with every party's randomness
// fixed, three parties generate the key whose id is in
// testdata/known-answer.txt (produced by this implementation; it changes
// only if the protocol or its encodings change, or crypto/rand.Int samples
// differently in a new Go release; a protocol change must then be a
// deliberate, versioned change).
func TestKnownAnswer(t *testing.T) {
	want, err := os.ReadFile("testdata/known-answer.txt")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	net := newMemNet(3)
	res := make([]*Result, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cfg := Config{Bits: 512, Parties: 3, Index: i, PublicSeed: []byte("known answer"), Batch: 128,
				Random: detReader(fmt.Sprintf("cohort/dealerless/known-answer/party-%d", i))}
			res[i-1], errs[i-1] = Generate(ctx, cfg, &memEnd{m: net, self: i})
			if errs[i-1] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("party %d: %v", i+1, err)
		}
	}
	got := fmt.Sprintf("key_id %x\ncandidates %d\n", res[0].Share.Public.KeyID, res[0].Candidates)
	if got != string(want) {
		t.Fatalf("got\n%swant\n%s", got, want)
	}
}
