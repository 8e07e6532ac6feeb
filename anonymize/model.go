package anonymize

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/table"
)

// Requirement is one ⟨QID, k⟩ of a joint anonymity requirement
// {⟨QID_1, k_1⟩, …, ⟨QID_p, k_p⟩} (Reddy et al. Def. 1, after Wang, Fung and
// Dong): every combination of values on QID must be shared by ≥ K records.
type Requirement struct {
	QID []string `yaml:"qid" json:"qid"`
	K   int      `yaml:"k" json:"k"`
}

func (r Requirement) String() string { return fmt.Sprintf("<{%s}, %d>", strings.Join(r.QID, ","), r.K) }

// PruneRequirements drops every ⟨QID_j, k_j⟩ implied by another ⟨QID_i, k_i⟩
// with QID_j ⊆ QID_i and k_j ≤ k_i (Def. 1's pruning rule: projecting onto
// fewer attributes only merges groups). Of two identical requirements the
// first is kept. Order is preserved.
func PruneRequirements(reqs []Requirement) []Requirement {
	var out []Requirement
	for j, rj := range reqs {
		implied := false
		for i, ri := range reqs {
			if i == j || rj.K > ri.K || !subset(rj.QID, ri.QID) {
				continue
			}
			same := rj.K == ri.K && subset(ri.QID, rj.QID)
			if !same || i < j {
				implied = true
				break
			}
		}
		if !implied {
			out = append(out, rj)
		}
	}
	return out
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// Groups returns the equivalence classes of t on the columns qid: the row
// indices sharing one combination of (published) values, in order of first
// appearance. It works on any table, generalised or not.
func Groups(t *table.Table, qid []string) ([][]int, error) {
	cols := make([]*table.Column, len(qid))
	for i, q := range qid {
		c, err := t.Column(q)
		if err != nil {
			return nil, fmt.Errorf("%w: QID column %q: %w", ErrRequirement, q, err)
		}
		cols[i] = c
	}
	index := map[string]int{}
	var groups [][]int
	var b strings.Builder
	for r := 0; r < t.NumRows(); r++ {
		b.Reset()
		for _, c := range cols {
			b.WriteString(c.Str[r])
			b.WriteByte(0)
		}
		g, ok := index[b.String()]
		if !ok {
			g = len(groups)
			index[b.String()] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], r)
	}
	return groups, nil
}

// MinGroup is A(QID): the size of the smallest equivalence class on qid
// (0 for an empty table).
func MinGroup(t *table.Table, qid []string) (int, error) {
	gs, err := Groups(t, qid)
	if err != nil {
		return 0, err
	}
	m := 0
	for i, g := range gs {
		if i == 0 || len(g) < m {
			m = len(g)
		}
	}
	return m, nil
}

// CheckK checks the joint anonymity requirement: A(QID_i) ≥ k_i for every i.
// The error names the requirement and the offending group's values.
func CheckK(t *table.Table, reqs []Requirement) error {
	for _, r := range reqs {
		if r.K < 1 {
			return fmt.Errorf("%w: %s: k must be at least 1", ErrRequirement, r)
		}
		gs, err := Groups(t, r.QID)
		if err != nil {
			return err
		}
		for _, g := range gs {
			if len(g) < r.K {
				return fmt.Errorf("%w: %s: group %s has %d records", ErrViolation, r, describe(t, r.QID, g[0]), len(g))
			}
		}
	}
	return nil
}

func describe(t *table.Table, qid []string, row int) string {
	parts := make([]string, len(qid))
	for i, q := range qid {
		c, _ := t.Column(q)
		parts[i] = q + "=" + c.Str[row]
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// sensitiveHist returns, per group, the histogram of the sensitive column.
func sensitiveHist(t *table.Table, qid []string, sensitive string) ([][]int, []map[string]int, *table.Column, error) {
	gs, err := Groups(t, qid)
	if err != nil {
		return nil, nil, nil, err
	}
	sc, err := t.Column(sensitive)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("%w: sensitive column %q: %w", ErrRequirement, sensitive, err)
	}
	hs := make([]map[string]int, len(gs))
	for i, g := range gs {
		hs[i] = map[string]int{}
		for _, r := range g {
			hs[i][sc.Str[r]]++
		}
	}
	return gs, hs, sc, nil
}

// CheckDistinctL checks distinct l-diversity: every class on qid holds at
// least l distinct values of the sensitive column (Sun, thesis Def. 2.6).
func CheckDistinctL(t *table.Table, qid []string, sensitive string, l int) error {
	gs, hs, _, err := sensitiveHist(t, qid, sensitive)
	if err != nil {
		return err
	}
	for i, h := range hs {
		if len(h) < l {
			return fmt.Errorf("%w: distinct %d-diversity on %q: group %s has %d distinct values", ErrViolation, l, sensitive, describe(t, qid, gs[i][0]), len(h))
		}
	}
	return nil
}

// Entropy is −Σ p log₂ p over a histogram.
func Entropy(counts []int) float64 {
	n := 0
	for _, c := range counts {
		n += c
	}
	h := 0.0
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / float64(n)
			h -= p * math.Log2(p)
		}
	}
	return h
}

// CheckEntropyL checks entropy l-diversity: every class's sensitive-value
// entropy is at least log₂ l (Sun, thesis Def. 2.6; the tolerance 1e-12 absorbs
// rounding, so exactly l equiprobable values pass).
func CheckEntropyL(t *table.Table, qid []string, sensitive string, l float64) error {
	gs, hs, _, err := sensitiveHist(t, qid, sensitive)
	if err != nil {
		return err
	}
	for i, h := range hs {
		counts := make([]int, 0, len(h))
		for _, c := range h {
			counts = append(counts, c)
		}
		slices.Sort(counts) // summation order fixed: deterministic result
		if e := Entropy(counts); e < math.Log2(l)-1e-12 {
			return fmt.Errorf("%w: entropy %g-diversity on %q: group %s has entropy %.4f < %.4f", ErrViolation, l, sensitive, describe(t, qid, gs[i][0]), e, math.Log2(l))
		}
	}
	return nil
}

// CheckPSensitive checks p-sensitive k-anonymity: k-anonymous on qid and at
// least p distinct sensitive values in every class (Sun, thesis Def. 3.1).
func CheckPSensitive(t *table.Table, qid []string, sensitive string, p, k int) error {
	if err := CheckK(t, []Requirement{{QID: qid, K: k}}); err != nil {
		return err
	}
	return CheckDistinctL(t, qid, sensitive, p)
}

// CheckPAlphaSensitive checks (p, α)-sensitive k-anonymity (Sun, thesis Def. 3.3):
// k-anonymous, at least p distinct sensitive values per class, and the class's
// total weight, summed per record (duplicates counted: Sun, thesis Table 3.5), at
// least α. weight maps each sensitive value to its category weight (Eq. 3.1,
// see CategoryWeights); a value without a weight is an error naming it.
func CheckPAlphaSensitive(t *table.Table, qid []string, sensitive string, p int, alpha float64, k int, weight map[string]float64) error {
	if err := CheckPSensitive(t, qid, sensitive, p, k); err != nil {
		return err
	}
	gs, hs, _, err := sensitiveHist(t, qid, sensitive)
	if err != nil {
		return err
	}
	for i, h := range hs {
		vals := make([]string, 0, len(h))
		for v := range h {
			vals = append(vals, v)
		}
		slices.Sort(vals)
		w := 0.0
		for _, v := range vals {
			wv, ok := weight[v]
			if !ok {
				return fmt.Errorf("%w: column %q: sensitive value %q has no category weight", ErrRequirement, sensitive, v)
			}
			w += wv * float64(h[v])
		}
		if w < alpha-1e-9 {
			return fmt.Errorf("%w: (%d,%g)-sensitivity on %q: group %s has weight %.4f", ErrViolation, p, alpha, sensitive, describe(t, qid, gs[i][0]), w)
		}
	}
	return nil
}

// CategoryWeights gives each sensitive value the weight of its category by
// Sun's thesis, Eq. 3.1: categories ordered from most to least sensitive, weight
// (i−1)/(m−1) for category i < m and 1 for the last.
func CategoryWeights(categories [][]string) map[string]float64 {
	m := len(categories)
	w := map[string]float64{}
	for i, cat := range categories {
		x := 1.0
		if i < m-1 {
			x = float64(i) / float64(m-1)
		}
		for _, v := range cat {
			w[v] = x
		}
	}
	return w
}
