package anonymize

import (
	"errors"
	"math"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// naiveNCP recomputes the NCP of a published table from labels alone.
func naiveNCP(t *testing.T, pub *table.Table, tax map[string]*Taxonomy, raw *table.Table) float64 {
	total := 0.0
	for _, c := range pub.Columns {
		tx := tax[c.Name]
		var lo, hi float64 = math.Inf(1), math.Inf(-1)
		if tx.Numeric {
			rc, _ := raw.Column(c.Name)
			for _, x := range rc.Num {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
		s := 0.0
		for _, v := range c.Str {
			id, ok := tx.Find(v)
			if !ok {
				t.Fatalf("%s: published %q is no taxonomy node", c.Name, v)
			}
			n := tx.Nodes[id]
			switch {
			case tx.Numeric:
				s += math.Min(1, (n.Hi-n.Lo)/(hi-lo))
			case len(n.Children) > 0:
				s += float64(n.Leaves) / float64(tx.Nodes[0].Leaves)
			}
		}
		total += s / float64(len(c.Str))
	}
	return total / float64(len(pub.Columns))
}

func TestOptimalFullDomainMatchesExhaustive(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []int{1, 2, 3, 4, 5, 7, 12, 17, 34} {
		res, err := OptimalFullDomain(ds, k)
		if err != nil {
			t.Fatalf("k=%d: %v", k, err)
		}
		pub := ds.Publish(res.Gen)
		if m := naiveMinGroup(pub, qid); m < k || m != res.MinGroup {
			t.Fatalf("k=%d: naive min group %d, reported %d", k, m, res.MinGroup)
		}
		if got := naiveNCP(t, pub, tax, raw); math.Abs(got-res.NCP) > 1e-12 {
			t.Fatalf("k=%d: NCP %v, naive %v", k, res.NCP, got)
		}
		// exhaustive: every level vector, generalised by label, checked naively
		best := math.Inf(1)
		for g := 0; g <= tax["gender"].MaxLevel(); g++ {
			for e := 0; e <= tax["education"].MaxLevel(); e++ {
				for a := 0; a <= tax["age"].MaxLevel(); a++ {
					cand := &table.Table{}
					for i, lv := range []int{g, e, a} {
						src, _ := raw.Column(qid[i])
						c := &table.Column{Name: qid[i]}
						for _, v := range src.Str {
							x, err := tax[qid[i]].Generalise(v, lv)
							if err != nil {
								t.Fatal(err)
							}
							c.Str = append(c.Str, x)
						}
						cand.Columns = append(cand.Columns, c)
					}
					if naiveMinGroup(cand, qid) >= k {
						best = math.Min(best, naiveNCP(t, cand, tax, raw))
					}
				}
			}
		}
		if math.Abs(best-res.NCP) > 1e-12 {
			t.Fatalf("k=%d: search NCP %v at %v, exhaustive optimum %v", k, res.NCP, res.Levels, best)
		}
	}
	if _, err := OptimalFullDomain(ds, 35); !errors.Is(err, ErrRequirement) {
		t.Fatalf("k > n: %v", err)
	}
}

// OptimalFullDomainAbove is the exhaustive optimum over the floor's
// up-cone, for every floor of seed 003's lattice and several k, and never
// goes below the floor.
func TestOptimalFullDomainAboveMatchesExhaustive(t *testing.T) {
	raw, tax := seed003(t)
	qid := []string{"gender", "education", "age"}
	ds, err := Encode(raw, qid, tax)
	if err != nil {
		t.Fatal(err)
	}
	reqs := func(k int) []Requirement { return []Requirement{{QID: qid, K: k}} }
	var all [][]int
	for g := 0; g <= tax["gender"].MaxLevel(); g++ {
		for e := 0; e <= tax["education"].MaxLevel(); e++ {
			for a := 0; a <= tax["age"].MaxLevel(); a++ {
				all = append(all, []int{g, e, a})
			}
		}
	}
	for _, k := range []int{2, 3, 5, 12} {
		for _, floor := range all {
			best := math.Inf(1)
			for _, lv := range all {
				if lv[0] >= floor[0] && lv[1] >= floor[1] && lv[2] >= floor[2] && naiveMinGroup(ds.Publish(ds.FullDomain(lv)), qid) >= k {
					best = math.Min(best, ds.NCP(ds.FullDomain(lv)))
				}
			}
			res, err := OptimalFullDomainAbove(ds, reqs(k), nil, floor)
			if math.IsInf(best, 1) {
				if !errors.Is(err, ErrRequirement) {
					t.Fatalf("k=%d floor %v: no anonymous node above, got %v", k, floor, err)
				}
				continue
			}
			if err != nil || math.Abs(res.NCP-best) > 1e-12 {
				t.Fatalf("k=%d floor %v: %v %v, exhaustive %v", k, floor, res, err, best)
			}
			for a := range floor {
				if res.Levels[a] < floor[a] {
					t.Fatalf("k=%d floor %v: levels %v", k, floor, res.Levels)
				}
			}
		}
	}
}
