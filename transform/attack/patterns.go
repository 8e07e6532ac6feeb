package attack

import (
	"errors"
	"math"

	"github.com/cohortdm/cohort/tree"
)

// Path is one root-to-leaf path of a mined tree: how many tests it has
// and whether the hacker cracked every one.
type Path struct {
	Len     int
	Cracked bool
}

// Paths scores the pattern disclosure of a mined tree (Definition 3):
// mined is the tree grown on the recoded table, decoded the same tree with
// the original thresholds (transform.DecodeTreeWithTable, of a monotone
// key, so the children correspond). A test "A' <= t'" is cracked when the
// hacker's crack function for A maps t' within rho[A] of the original
// threshold; a categorical test, whose value is in clear, always is. A
// test on a column without a crack function is not cracked. The pattern
// disclosure risk is the share of cracked paths.
func Paths(mined, decoded *tree.Tree, crack map[string]func(float64) float64, rho map[string]float64) ([]Path, error) {
	var out []Path
	var walk func(m, d *tree.Node, depth int, cracked bool) error
	walk = func(m, d *tree.Node, depth int, cracked bool) error {
		if m.IsLeaf() != d.IsLeaf() {
			return errors.New("attack: the decoded tree has another shape")
		}
		if m.IsLeaf() {
			out = append(out, Path{Len: depth, Cracked: cracked})
			return nil
		}
		s, t := m.Split, d.Split
		if s.Column != t.Column || s.Op != t.Op {
			return errors.New("attack: the decoded tree splits other columns")
		}
		ok := s.Op == tree.OpEQ
		if g, found := crack[s.Column]; found && s.Op == tree.OpLE {
			ok = math.Abs(g(s.Num)-t.Num) <= rho[s.Column]
		}
		if err := walk(m.Left, d.Left, depth+1, cracked && ok); err != nil {
			return err
		}
		return walk(m.Right, d.Right, depth+1, cracked && ok)
	}
	if err := walk(mined.Root, decoded.Root, 0, true); err != nil {
		return nil, err
	}
	return out, nil
}

// Combination scores the combination attack of §6.2.2 over three attacks'
// cracks of the same values (Cracked's results for linear regression,
// spline and polyline). Regions are the Venn diagram's seven regions
// (Figure 10), as shares of the values, keyed by the attacks that crack
// them ("P", "S", "L", "PS", "PL", "SL", "PSL").
type Combination struct {
	// Union: the paper's "add up all the percentages" (25% on its
	// attribute 10): every value cracked by at least one attack.
	Union float64
	// Expected: each attack trusted equally, a value cracked by k of the
	// three counts k/3 ((|L| + |S| + |P|)/3). The paper's 12.5% does not
	// follow from its own numbers with this or any formula the notes
	// found; it is reported, not targeted.
	Expected float64
	// TwoOrMore: values on which at least two attacks agree (16% there).
	TwoOrMore float64
	Regions   map[string]float64
}

// Combine scores linear-regression, spline and polyline cracks l, s, p.
func Combine(l, s, p []bool) Combination {
	c := Combination{Regions: map[string]float64{}}
	n := float64(len(l))
	for i := range l {
		name, k := "", 0
		if p[i] {
			name, k = name+"P", k+1
		}
		if s[i] {
			name, k = name+"S", k+1
		}
		if l[i] {
			name, k = name+"L", k+1
		}
		if k == 0 {
			continue
		}
		c.Regions[name] += 1 / n
		c.Union += 1 / n
		c.Expected += float64(k) / 3 / n
		if k >= 2 {
			c.TwoOrMore += 1 / n
		}
	}
	return c
}
