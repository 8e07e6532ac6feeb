package lattice

import (
	"errors"
	"math/rand/v2"
	"testing"
)

// A party that drops before contributing is left out of the sum (its
// sibling contributions still decode with their own count); a party that
// drops after contributing but before decrypting is left out of the plan,
// and the remaining members still decrypt and verify.
func TestDrops(t *testing.T) {
	keys := testKeys(t, 5, 3)
	l, err := NewLayout(params(t), 500, 8, 24, 5)
	if err != nil {
		t.Fatal(err)
	}
	in := randomInputs(rand.New(rand.NewPCG(14, 15)), 5, 500, 24)
	t.Run("before contributing", func(t *testing.T) {
		dropped := append([][]int64(nil), in...)
		dropped[3] = nil
		r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(keys[0].PublicKey, 3)}
		res, err := r.run(t, dropped)
		if err != nil {
			t.Fatal(err)
		}
		checkTotals(t, res.Totals, plainSums(dropped))
		if !res.Verdict.Confirmed {
			t.Fatalf("verdict %+v", res.Verdict)
		}
	})
	t.Run("before decrypting", func(t *testing.T) {
		r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(keys[0].PublicKey, 4), avail: available(5, 2)}
		res, err := r.run(t, in)
		if err != nil {
			t.Fatal(err)
		}
		checkTotals(t, res.Totals, plainSums(in))
		if !res.Verdict.Confirmed {
			t.Fatalf("verdict %+v", res.Verdict)
		}
	})
	t.Run("down to the quorum", func(t *testing.T) {
		r := &round{keys: keys, layout: l, plan: PlanVerified, ctx: testContext(keys[0].PublicKey, 5), avail: available(5, 2, 4)}
		if _, err := r.run(t, in); !errors.Is(err, ErrParams) {
			t.Fatalf("verified plan over exactly the quorum: %v", err)
		}
		r.plan = PlanSingle
		res, err := r.run(t, in)
		if err != nil {
			t.Fatal(err)
		}
		checkTotals(t, res.Totals, plainSums(in))
		if res.Verdict.Confirmed {
			t.Fatal("a single quorum's decryption reported as confirmed")
		}
	})
}

// A party restarted mid-round rebuilds its state from its key files and the
// committed step: its decryption shares combine with the others' exactly as
// before. If it re-encrypted its input instead of resending the committed
// contribution, the fresh ciphertext no longer matches the commitment and
// every decryptor refuses the aggregate.
func TestRestartedParty(t *testing.T) {
	keys := testKeys(t, 5, 3)
	pk := keys[0].PublicKey
	pub, err := keys[2].MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	share, err := keys[2].MarshalShare()
	if err != nil {
		t.Fatal(err)
	}
	restarted, err := ParseKeys(pub, share)
	if err != nil {
		t.Fatal(err)
	}
	again := append([]*Keys(nil), keys...)
	again[2] = restarted
	l, err := NewLayout(params(t), 300, 16, 40, 5)
	if err != nil {
		t.Fatal(err)
	}
	in := randomInputs(rand.New(rand.NewPCG(16, 17)), 5, 300, 40)
	r := &round{keys: again, layout: l, plan: PlanVerified, ctx: testContext(pk, 6)}
	res, err := r.run(t, in)
	if err != nil {
		t.Fatal(err)
	}
	checkTotals(t, res.Totals, plainSums(in))

	ctx := testContext(pk, 9)
	parts, committed := contributions(t, keys, l, ctx)
	enc, err := NewEncryptor(pk)
	if err != nil {
		t.Fatal(err)
	}
	redone, err := enc.EncryptInts(ctx, 3, l, in[2])
	if err != nil {
		t.Fatal(err)
	}
	if redone.Inputs[0].Digest == parts[2].Inputs[0].Digest {
		t.Fatal("re-encryption repeated the ciphertext")
	}
	sum := sumParts(t, NewAggregator(pk, l), []*Aggregate{parts[0], parts[1], redone, parts[3], parts[4]})
	dec, err := NewDecryptor(keys[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dec.Target(sum.Mask(), Expect{Context: ctx, Shape: l.Shape(), Committed: committed}); !errors.Is(err, ErrPolicy) {
		t.Fatalf("aggregate with a re-encrypted contribution: %v, want ErrPolicy", err)
	}
}
