package coherence

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// On random small databases every algorithm agrees with a recounting
// greedy, the counts with enumeration, and the checker accepts every
// publication.
func TestRandomAgainstBrute(t *testing.T) {
	rng := rand.New(rand.NewPCG(4, 8))
	ctx := context.Background()
	runs, eligible := 0, 0
	for runs < 400 {
		db := randomDB(rng)
		prm, nug := randomParams(rng)
		runs++
		name := fmt.Sprintf("run %d (h=%v k=%d p=%d k'=%d p'=%d)", runs, prm.H, prm.K, prm.P, nug.K, nug.P)
		ref := newBrute(db, prm)
		if !ref.eligible() {
			if _, err := TreeCohesion(ctx, db, prm); !errors.Is(err, ErrIneligible) {
				t.Fatalf("%s: ineligible database, Tree-Cohesion says %v", name, err)
			}
			continue
		}
		eligible++
		// The checker rejects the database itself when it has a mole.
		if err := Check(ctx, db, db.Database, prm); (err == nil) != (len(ref.moles()) == 0) {
			t.Fatalf("%s: the database has %d moles, the checker says %v", name, len(ref.moles()), err)
		}
		// Minimal moles.
		_, res, moles, err := start(ctx, db, prm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b := newBrute(db, prm)
		size1 := b.size1()
		if !slices.Equal(res.Suppressed, size1) {
			t.Fatalf("%s: size-1 moles %v, want %v", name, res.Suppressed, size1)
		}
		got := moles.All()
		slices.SortFunc(got, slices.Compare)
		if want := b.minimalMoles(); !slices.EqualFunc(got, want, slices.Equal) {
			t.Fatalf("%s: minimal moles %v, want %v", name, got, want)
		}
		checkAlgo := func(alg string, sup []int32, want []int32) {
			t.Helper()
			if !slices.Equal(sup, want) {
				t.Fatalf("%s: %s suppressed %v, recounting greedy %v", name, alg, sup, want)
			}
			if err := Check(ctx, db, db.Without(sup), prm); err != nil {
				t.Fatalf("%s: %s: checker: %v", name, alg, err)
			}
		}
		tr, err := TreeCohesion(ctx, db, prm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkAlgo("Tree-Cohesion", tr.Suppressed, newBrute(db, prm).tree())
		br, err := BorderCohesion(ctx, db, prm, nug)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkAlgo("Border-Cohesion", br.Suppressed, newBrute(db, prm).border(nug))
		rm, err := RmAll(ctx, db, prm)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		checkAlgo("RmAll", rm.Suppressed, newBrute(db, prm).rmAll())
		// Counts over the borders.
		if c, err := CountMoles(ctx, db, prm); err != nil || c != CountOf(uint64(len(newBrute(db, prm).moles()))) {
			t.Fatalf("%s: %v moles counted (%v), %d enumerated", name, c, err, len(newBrute(db, prm).moles()))
		}
		if n := len(newBrute(db, prm).nuggets(nug)); br.NuggetsBefore != CountOf(uint64(n)) {
			t.Fatalf("%s: %v nuggets counted, %d enumerated", name, br.NuggetsBefore, n)
		}
		after := newBrute(db, prm)
		for _, v := range br.Suppressed {
			after.without(v)
		}
		if n := len(after.nuggets(nug)); br.NuggetsAfter != CountOf(uint64(n)) {
			t.Fatalf("%s: %v nuggets left counted, %d enumerated", name, br.NuggetsAfter, n)
		}
		if c, err := CountNuggets(ctx, db, br.Suppressed, nug); err != nil || c != br.NuggetsAfter {
			t.Fatalf("%s: CountNuggets %v, %v; want %v", name, c, err, br.NuggetsAfter)
		}
	}
	if eligible < 200 {
		t.Fatalf("only %d of %d random databases were eligible", eligible, runs)
	}
}

// The checker rejects publications that are not a suppression of public
// items: an item dropped from one transaction only, a private item
// suppressed, a transaction lost, items reordered.
func TestCheckerStructure(t *testing.T) {
	ctx := context.Background()
	db := loadFigure10(t)
	res, err := TreeCohesion(ctx, db, figure10Params)
	if err != nil {
		t.Fatal(err)
	}
	good := res.Publish(db)
	if err := Check(ctx, db, good, figure10Params); err != nil {
		t.Fatalf("the Tree-Cohesion publication: %v", err)
	}
	mutate := func(f func(d *Database)) *Database {
		d := &Database{Items: good.Items}
		for _, tr := range good.Trans {
			d.Trans = append(d.Trans, slices.Clone(tr))
		}
		f(d)
		return d
	}
	s1, _ := labelIndex(db.Database)["s1"]
	cases := map[string]*Database{
		"item dropped from one transaction": mutate(func(d *Database) { d.Trans[0] = d.Trans[0][1:] }),
		"private item suppressed": mutate(func(d *Database) {
			for i, tr := range d.Trans {
				d.Trans[i] = slices.DeleteFunc(tr, func(x int32) bool { return x == s1 })
			}
		}),
		"transaction lost":   mutate(func(d *Database) { d.Trans = d.Trans[1:] }),
		"items reordered":    mutate(func(d *Database) { slices.Reverse(d.Trans[0]) }),
		"nothing suppressed": db.Database,
	}
	for name, d := range cases {
		if err := Check(ctx, db, d, figure10Params); !errors.Is(err, ErrNotCohesion) {
			t.Errorf("%s: checker says %v", name, err)
		}
	}
}
