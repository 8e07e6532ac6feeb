package lattice

import (
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
)

// The workload of docs/lattice.md, as secureagg's BenchmarkAggregate:
// FracBits 16, ValueBits 32, fanout 4, every party's vector distinct, no
// noise, all parties in this process on the machine's cores.
const (
	benchFrac  = 16
	benchValue = 32
)

// BenchmarkKeyGen measures the dealerless key generation of N members in
// one process: every member's shares, the folds and every member's
// Finalise. B/member is what one member sends: its public-key share to the
// folder and a secret share to each other member.
func BenchmarkKeyGen(b *testing.B) {
	for _, n := range []int{3, 5, 17} {
		b.Run(fmt.Sprintf("N=%d", n), func(b *testing.B) {
			p := params(b)
			cpu0 := cputime.Used(b)
			rounds := 0
			for b.Loop() {
				if _, err := generate(p, names(n), DefaultQuorum(n), []byte(strconv.Itoa(rounds))); err != nil {
					b.Fatal(err)
				}
				rounds++
			}
			cpu := cputime.Used(b) - cpu0
			b.ReportMetric(float64(cpu.Milliseconds())/float64(rounds), "cpu-ms/op")
			kg, _ := NewKeyGen(p, names(n), DefaultQuorum(n), nil)
			pub, secrets, _ := kg.GenShares(names(n)[0])
			sent, _ := pub.MarshalBinary()
			total := len(sent)
			for _, s := range secrets[1:] {
				bs, _ := s.MarshalBinary()
				total += len(bs)
			}
			b.ReportMetric(float64(total), "B/member")
		})
	}
}

// BenchmarkRound measures one aggregation round as secureagg's tree would
// run it (see round): every party encrypts in its own goroutine, the tree
// folds, the root sends the total's mask down, every member of the plan's
// quorums makes its shares in its own goroutine, the root opens and sends
// the plaintext down; every message goes through its encoding. ns/op is
// the round's latency with all parties sharing this machine's cores;
// cpu-ms/round the CPU all of them spent; B/party the bytes one party sends
// per round (mean and max: the root and inner nodes send most).
//
// plan=verified detects a wrong share (the default), plan=single trusts
// the decryptors (one quorum). MHE_BENCH_VALUES and MHE_BENCH_N pick one
// cell of the grid.
func BenchmarkRound(b *testing.B) {
	for _, values := range gridOr("MHE_BENCH_VALUES", []int{50, 10000, 1000000}) {
		for _, n := range gridOr("MHE_BENCH_N", []int{3, 5, 17}) {
			for _, plan := range []string{"verified", "single"} {
				b.Run(fmt.Sprintf("values=%d/N=%d/plan=%s", values, n, plan), func(b *testing.B) {
					benchRound(b, values, n, plan)
				})
			}
		}
	}
}

func gridOr(env string, def []int) []int {
	if v, err := strconv.Atoi(os.Getenv(env)); err == nil && v > 0 {
		return []int{v}
	}
	return def
}

func benchRound(b *testing.B, values, n int, planName string) {
	keys := testKeys(b, n, DefaultQuorum(n))
	l, err := NewLayout(params(b), values, benchFrac, benchValue, n)
	if err != nil {
		b.Fatal(err)
	}
	plan := PlanVerified
	if planName == "single" {
		plan = PlanSingle
	}
	in := randomInputs(rand.New(rand.NewPCG(uint64(values), uint64(n))), n, values, benchValue)
	r := &round{keys: keys, layout: l, plan: plan, parallel: true}
	rounds := 0
	var sent []int
	cpu0 := cputime.Used(b)
	for b.Loop() {
		r.ctx = testContext(keys[0].PublicKey, rounds)
		res, err := r.run(b, in)
		if err != nil || res.Totals == nil {
			b.Fatal(err)
		}
		if sent == nil {
			sent = make([]int, n)
		}
		for i, x := range r.bytes {
			sent[i] += x
		}
		rounds++
	}
	cpu := cputime.Used(b) - cpu0
	var total, most float64
	for _, x := range sent {
		total += float64(x) / float64(rounds)
		most = max(most, float64(x)/float64(rounds))
	}
	own := float64(l.Ciphertexts() * params(b).CiphertextBytes())
	b.ReportMetric(float64(cpu.Milliseconds())/float64(rounds), "cpu-ms/round")
	b.ReportMetric(total/float64(n), "B/party")
	b.ReportMetric(most, "B/party-max")
	b.ReportMetric(own, "B-own-ct")
	b.ReportMetric(float64(l.Ciphertexts()), "cts")
}

// BenchmarkOps measures the per-ciphertext costs the cross-over model of
// docs/lattice.md uses: encrypting one ciphertext (8,192 coefficients),
// making one decryption share of it, opening it with one quorum's share,
// and the wire encoding and decoding of one contribution.
func BenchmarkOps(b *testing.B) {
	keys := testKeys(b, 5, 3)
	pk := keys[0].PublicKey
	p := params(b)
	probe, err := NewLayout(p, 1, benchFrac, benchValue, 5)
	if err != nil {
		b.Fatal(err)
	}
	values := int(float64(p.Slots()) * probe.ValuesPerCoefficient()) // one full ciphertext
	l, err := NewLayout(p, values, benchFrac, benchValue, 5)
	if err != nil {
		b.Fatal(err)
	}
	in := randomInputs(rand.New(rand.NewPCG(1, 1)), 5, values, benchValue)
	enc, err := NewEncryptor(pk)
	if err != nil {
		b.Fatal(err)
	}
	ctx := testContext(pk, 1)
	b.Run("encrypt", func(b *testing.B) {
		cpuLoop(b, func() error {
			_, err := enc.EncryptInts(ctx, 1, l, in[0])
			return err
		})
	})
	r := &round{keys: keys, layout: l, plan: PlanSingle, ctx: ctx}
	if _, err := r.run(b, in); err != nil {
		b.Fatal(err)
	}
	open := r.opened
	dec, err := NewDecryptor(keys[0])
	if err != nil {
		b.Fatal(err)
	}
	committed := open.agg.Inputs
	target, err := dec.Target(open.agg.Mask(), Expect{Context: ctx, Shape: l.Shape(), Committed: committed})
	if err != nil {
		b.Fatal(err)
	}
	b.Run("share", func(b *testing.B) {
		cpuLoop(b, func() error {
			_, err := dec.GenShare(target, open.plan, 0)
			return err
		})
	})
	b.Run("open", func(b *testing.B) {
		cpuLoop(b, func() error {
			_, err := open.Open()
			return err
		})
	})
	a, err := enc.EncryptInts(ctx, 1, l, in[0])
	if err != nil {
		b.Fatal(err)
	}
	b.Run("sketch", func(b *testing.B) {
		key := SketchKey{1}
		cpuLoop(b, func() error {
			a.Sketch(key)
			return nil
		})
	})
	g := NewAggregator(pk, l)
	b.Run("wire", func(b *testing.B) {
		into := g.Allocate()
		cpuLoop(b, func() error {
			bs, err := a.MarshalBinary()
			if err != nil {
				return err
			}
			return into.UnmarshalBinary(bs)
		})
	})
}

// cpuLoop runs f as the benchmark's body and reports its CPU time per call
// beside the wall time (on a shared machine the wall time inflates with
// others' load, the CPU time much less).
func cpuLoop(b *testing.B, f func() error) {
	cpu0, n := cputime.Used(b), 0
	for b.Loop() {
		if err := f(); err != nil {
			b.Fatal(err)
		}
		n++
	}
	b.ReportMetric(float64((cputime.Used(b)-cpu0).Microseconds())/1000/float64(n), "cpu-ms/op")
}

// BenchmarkEncryptMillion measures one party's encryption of a million
// values at sum's fixed point on five parties (63 ciphertexts), as a
// round's critical path sees it: computing every encryption of zero
// (pool=none) or taking them from a full ZeroPool (pool=full, filled and
// paused before the timer starts).
func BenchmarkEncryptMillion(b *testing.B) {
	keys := testKeys(b, 5, 3)
	pk := keys[0].PublicKey
	l, err := NewLayout(params(b), 1_000_000, 8, 24, 5)
	if err != nil {
		b.Fatal(err)
	}
	v := make([]int64, 1_000_000)
	for i := range v {
		v[i] = int64(i % 1000)
	}
	for _, pooled := range []bool{false, true} {
		b.Run(fmt.Sprintf("pool=%s", map[bool]string{false: "none", true: "full"}[pooled]), func(b *testing.B) {
			enc, err := NewEncryptor(pk)
			if err != nil {
				b.Fatal(err)
			}
			for range b.N {
				var p *ZeroPool
				if pooled {
					b.StopTimer()
					if p, err = NewZeroPool(b.Context(), pk, l.Ciphertexts()); err != nil {
						b.Fatal(err)
					}
					for p.Stats().Ready < l.Ciphertexts() {
						time.Sleep(time.Millisecond)
					}
					p.Pause()
					b.StartTimer()
				}
				if err := enc.UseZeros(p); err != nil {
					b.Fatal(err)
				}
				if _, err := enc.EncryptInts(testContext(pk, 1), 1, l, v); err != nil {
					b.Fatal(err)
				}
				if p != nil {
					b.StopTimer()
					p.Close()
					b.StartTimer()
				}
			}
		})
	}
}
