package coherence

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The thesis gives no worked example of its k-Anonymizer; this one is
// worked by hand on its running example (Figure 10, k = 3). Every
// transaction is in one class; specialising v splits it into Sup(v) and
// 7 − Sup(v) transactions, so only a and e (Sup 4: classes of 4 and 3)
// keep A ≥ 3, both with Score = 4 / (7 − 3 + 1); the tie goes to a, first
// in the file. After a the classes are {T1,T3,T4,T5} and {T2,T6,T7}, and
// every other item would leave a class of 1 or 2 (e: T1 alone among a's;
// b: T7 alone among the others; f: T1,T4 of a's; g: T2..: T1 alone of a's
// without g; c, d: support 1). So only a is published: 22 of the 33
// occurrences are lost, against Tree-Cohesion's 11 (c, d, a, b).
func TestKAnonymizerFigure10(t *testing.T) {
	ctx := context.Background()
	db := loadFigure10(t)
	res, err := KAnonymizer(ctx, db, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got := labels(db.Database, res.Specialised); !slices.Equal(got, []string{"a"}) {
		t.Errorf("specialised %v, want [a]", got)
	}
	got := slices.Sorted(slices.Values(labels(db.Database, res.Suppressed)))
	if want := []string{"b", "c", "d", "e", "f", "g"}; !slices.Equal(got, want) {
		t.Errorf("suppressed %v, want %v", got, want)
	}
	if res.Classes != 2 || res.MinClass != 3 {
		t.Errorf("%d classes, the smallest of %d; want 2 and 3", res.Classes, res.MinClass)
	}
	pub := res.Publish(db)
	if loss := LossOfItems(db.Database, pub); loss != 22.0/33 {
		t.Errorf("loss of items %v, want 22/33", loss)
	}
	if err := CheckKAnonymous(db, pub, 3); err != nil {
		t.Errorf("k = 3: %v", err)
	}
	if err := CheckKAnonymous(db, pub, 4); !errors.Is(err, ErrNotKAnonymous) {
		t.Errorf("k = 4 (a class of 3): %v, want %v", err, ErrNotKAnonymous)
	}
	// At h = 50 % the publication is also a cohesion: Pr(s2 | a) = 2/4.
	if err := Check(ctx, db, pub, figure10Params); err != nil {
		t.Errorf("h = 50 %%: %v", err)
	}
	// At h = 45 % it is not: {a} breaches h, the one mole left, while
	// Tree-Cohesion's publication has none.
	strict := Params{H: 0.45, K: 3, P: 3}
	if err := Check(ctx, db, pub, strict); !errors.Is(err, ErrNotCohesion) {
		t.Errorf("h = 45 %%: checker says %v", err)
	}
	if n, err := MolesLeft(ctx, db, res.Suppressed, strict); err != nil || n != 1 {
		t.Errorf("h = 45 %%: %d moles left (%v), want 1", n, err)
	}
	tr, err := TreeCohesion(ctx, db, strict)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := MolesLeft(ctx, db, tr.Suppressed, strict); err != nil || n != 0 {
		t.Errorf("Tree-Cohesion at h = 45 %%: %d moles left (%v)", n, err)
	}
	if n, err := MolesLeft(ctx, db, nil, figure10Params); err != nil || n != 7 {
		t.Errorf("Figure 10: %d minimal moles (%v), want 7 (c, d, ae, af, ag, be, bfg)", n, err)
	}
}

// On random databases the k-Anonymizer's publication is k-anonymous over
// the public items (checked apart from the algorithm), so no public
// itemset it holds has support below k whatever p (the checker at h = 1,
// p = ∞); it is maximal (publishing any one more item breaks
// k-anonymity); and its choices equal those of a reference that
// recomputes the classes from scratch at every step and never drops a
// candidate.
func TestKAnonymizerRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 32))
	ctx := context.Background()
	specialised := 0
	for run := range 300 {
		db := randomDB(rng)
		k := 2 + rng.IntN(4)
		name := fmt.Sprintf("run %d (k=%d, %d transactions)", run, k, len(db.Trans))
		res, err := KAnonymizer(ctx, db, k)
		if len(db.Trans) < k {
			if !errors.Is(err, ErrTooFew) {
				t.Fatalf("%s: %v, want %v", name, err, ErrTooFew)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		specialised += len(res.Specialised)
		if want := bruteKAnon(db, k); !slices.Equal(res.Specialised, want) {
			t.Fatalf("%s: specialised %v, reference %v", name, res.Specialised, want)
		}
		pub := res.Publish(db)
		if err := CheckKAnonymous(db, pub, k); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if err := Check(ctx, db, pub, Params{H: 1, K: k}); err != nil {
			t.Fatalf("%s: identity moles left: %v", name, err)
		}
		if got := minClass(db, res.Specialised); got != res.MinClass {
			t.Fatalf("%s: smallest class %d, reported %d", name, got, res.MinClass)
		}
		for i, v := range res.Suppressed {
			more := slices.Delete(slices.Clone(res.Suppressed), i, i+1)
			if err := CheckKAnonymous(db, db.Without(more), k); err == nil {
				t.Fatalf("%s: item %s could also be published", name, db.Items[v])
			}
		}
	}
	if specialised < 100 {
		t.Fatalf("only %d items specialised over the runs: the test is too weak", specialised)
	}
}

// bruteKAnon is TDS over binary items done plainly: at every step it
// recomputes the classes of every candidate set by projection and scores
// every public item not yet published.
func bruteKAnon(db *Labelled, k int) []int32 {
	sup := db.Supports()
	var out []int32
	for {
		a := minClass(db, out)
		best, bestNum, bestDen := int32(-1), 0, 1
		for v, r := range db.Roles {
			if r != Public || sup[v] == 0 || slices.Contains(out, int32(v)) {
				continue
			}
			av := minClass(db, append(slices.Clone(out), int32(v)))
			if av < k {
				continue
			}
			if num, den := sup[v], a-av+1; best < 0 || num*bestDen > bestNum*den {
				best, bestNum, bestDen = int32(v), num, den
			}
		}
		if best < 0 {
			return out
		}
		out = append(out, best)
	}
}

// minClass is the smallest class of db's transactions by the items of set
// they hold.
func minClass(db *Labelled, set []int32) int {
	count := map[string]int{}
	key := func(tr []int32) string {
		var b strings.Builder
		for _, v := range set {
			if slices.Contains(tr, v) {
				b.WriteByte('1')
			} else {
				b.WriteByte('0')
			}
		}
		return b.String()
	}
	for _, tr := range db.Trans {
		count[key(tr)]++
	}
	m := len(db.Trans)
	for _, n := range count {
		m = min(m, n)
	}
	return m
}
