package anonymize

import (
	"fmt"
	"math"
	"slices"
)

// SensitiveModel is a conjunction of conditions on the sensitive values of
// every class, each a function of the class's histogram of sensitive values
// alone (Sun's thesis, ch. 2–3). Zero fields are off; an empty model asks
// nothing. Every condition is monotone under merging classes (a union of
// classes that each satisfy it satisfies it), which the lattice search and
// the top-down algorithms rely on.
type SensitiveModel struct {
	// L: distinct l-diversity, at least L distinct values (Machanavajjhala
	// et al.; Sun Def. 2.6). p-sensitive k-anonymity (Sun Def. 3.1) is the
	// same condition with p = L.
	L int `yaml:"l" json:"l,omitempty"`
	// EntropyL: entropy l-diversity, the class's entropy at least log₂ EntropyL.
	EntropyL float64 `yaml:"entropy_l" json:"entropy_l,omitempty"`
	// RecursiveC with RecursiveL: recursive (c, l)-diversity, r₁ < c·(r_l +
	// … + r_m) for the class's value counts r₁ ≥ r₂ ≥ … ≥ r_m.
	RecursiveC float64 `yaml:"recursive_c" json:"recursive_c,omitempty"`
	RecursiveL int     `yaml:"recursive_l" json:"recursive_l,omitempty"`
	// PPlus: p⁺-sensitivity, at least PPlus distinct categories (Sun Def. 3.2).
	PPlus int `yaml:"p_plus" json:"p_plus,omitempty"`
	// Alpha: the class's total weight, summed per record, at least Alpha
	// ((p, α)- and (p⁺, α)-sensitivity, Sun Defs. 3.3–3.4, weights by Eq. 3.1).
	Alpha float64 `yaml:"alpha" json:"alpha,omitempty"`
	// Categories partition the sensitive values, most sensitive first (Sun
	// Table 3.3); PPlus and Alpha need them.
	Categories [][]string `yaml:"categories" json:"categories,omitempty"`
}

// Diversity is the fewest distinct sensitive values the model guarantees
// in every class: distinct l-diversity and p-sensitivity by definition,
// entropy l-diversity (an entropy of log₂ l needs l values), recursive
// (c, l)-diversity (it needs l values) and p⁺-sensitivity (p⁺ categories,
// so as many values). A node's policy compares it with its floor on l.
func (m SensitiveModel) Diversity() int {
	return max(m.L, int(m.EntropyL), m.RecursiveL, m.PPlus)
}

// IsZero reports whether the model asks nothing.
func (m SensitiveModel) IsZero() bool {
	return m.L <= 1 && m.EntropyL <= 1 && m.RecursiveL <= 1 && m.PPlus <= 1 && m.Alpha <= 0
}

// FieldError is an invalid parameter of a model, named as the jobs' params
// spell it (Field "p_plus", "categories[2]", ...), so a job can name
// params.<Field>. It wraps ErrRequirement.
type FieldError struct {
	Field, Why string
}

func (e *FieldError) Error() string { return fmt.Sprintf("%v: %s: %s", ErrRequirement, e.Field, e.Why) }

// Unwrap makes a FieldError an ErrRequirement.
func (e *FieldError) Unwrap() error { return ErrRequirement }

func bad(field, why string, a ...any) error {
	return &FieldError{Field: field, Why: fmt.Sprintf(why, a...)}
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// Validate checks the parameters (a *FieldError).
func (m SensitiveModel) Validate() error {
	switch {
	case m.L < 0:
		return bad("l", "must be at least 0, not %d", m.L)
	case m.EntropyL < 0 || !finite(m.EntropyL):
		return bad("entropy_l", "must be a number at least 0")
	case m.RecursiveL < 0 || (m.RecursiveL > 1) != (m.RecursiveC > 0) || !finite(m.RecursiveC):
		return bad("recursive_c", "recursive_c and recursive_l go together (c > 0, l ≥ 2)")
	case m.PPlus < 0:
		return bad("p_plus", "must be at least 0, not %d", m.PPlus)
	case m.Alpha < 0 || !finite(m.Alpha):
		return bad("alpha", "must be a number at least 0")
	case (m.PPlus > 1 || m.Alpha > 0) && len(m.Categories) < 2:
		return bad("categories", "p_plus and alpha need at least two categories, most sensitive first")
	case m.PPlus > len(m.Categories) && len(m.Categories) > 0:
		return bad("p_plus", "%d with %d categories", m.PPlus, len(m.Categories))
	}
	seen := map[string]bool{}
	for i, cat := range m.Categories {
		if len(cat) == 0 {
			return bad(fmt.Sprintf("categories[%d]", i), "is empty")
		}
		for _, v := range cat {
			if seen[v] {
				return bad(fmt.Sprintf("categories[%d]", i), "holds a value another category holds")
			}
			seen[v] = true
		}
	}
	return nil
}

// String names the model's conditions, for errors and results.
func (m SensitiveModel) String() string {
	s := ""
	add := func(f string, a ...any) {
		if s != "" {
			s += ", "
		}
		s += fmt.Sprintf(f, a...)
	}
	if m.L > 1 {
		add("distinct %d-diversity", m.L)
	}
	if m.EntropyL > 1 {
		add("entropy %g-diversity", m.EntropyL)
	}
	if m.RecursiveL > 1 {
		add("recursive (%g, %d)-diversity", m.RecursiveC, m.RecursiveL)
	}
	if m.PPlus > 1 {
		add("%d⁺-sensitivity", m.PPlus)
	}
	if m.Alpha > 0 {
		add("weight ≥ %g", m.Alpha)
	}
	if s == "" {
		return "no sensitive model"
	}
	return s
}

// Coded is a sensitive column coded for the algorithms: one code per record
// (codes in order of first appearance), each code's category and weight.
type Coded struct {
	Model  SensitiveModel
	Code   []int32
	Values []string // Values[code]
	cat    []int32  // per code; -1 without categories
	weight []float64
	ncat   int
}

// Code codes a sensitive column (one value per record) for model. A value
// in no category, when the model has categories, is an error that does not
// name it (the column stays with its owner).
func (m SensitiveModel) Code(column []string) (*Coded, error) {
	if err := m.Validate(); err != nil {
		return nil, err
	}
	c := &Coded{Model: m, Code: make([]int32, len(column)), ncat: len(m.Categories)}
	catOf := map[string]int{}
	for i, cat := range m.Categories {
		for _, v := range cat {
			catOf[v] = i
		}
	}
	w := CategoryWeights(m.Categories)
	index := map[string]int32{}
	for r, v := range column {
		code, ok := index[v]
		if !ok {
			code = int32(len(c.Values))
			index[v] = code
			c.Values = append(c.Values, v)
			ci, in := catOf[v]
			if len(m.Categories) > 0 && !in {
				return nil, fmt.Errorf("%w: record %d's sensitive value is in no category", ErrRequirement, r+1)
			}
			if len(m.Categories) == 0 {
				ci = -1
			}
			c.cat = append(c.cat, int32(ci))
			c.weight = append(c.weight, w[v])
		}
		c.Code[r] = code
	}
	return c, nil
}

// NumCodes is the number of distinct sensitive values.
func (c *Coded) NumCodes() int { return len(c.Values) }

// Hist is a class's histogram of sensitive codes; add records with Add.
type Hist struct {
	counts   []int32
	cats     []int32
	n        int
	distinct int
	dcats    int
	sumClogC float64 // Σ c·log₂ c, for the entropy
	weight   float64
	scratch  []int32 // recursive (c, l)'s sorted counts
}

// NewHist returns an empty histogram for c's codes.
func (c *Coded) NewHist() *Hist {
	return &Hist{counts: make([]int32, len(c.Values)), cats: make([]int32, max(c.ncat, 0))}
}

// Reset empties h.
func (h *Hist) Reset() {
	clear(h.counts)
	clear(h.cats)
	*h = Hist{counts: h.counts, cats: h.cats, scratch: h.scratch}
}

// Add adds record r.
func (c *Coded) Add(h *Hist, r int32) { c.AddCode(h, c.Code[r], 1) }

// AddCode adds n records of one code.
func (c *Coded) AddCode(h *Hist, code int32, n int32) {
	x := &h.counts[code]
	entropy := c.Model.EntropyL > 1
	if *x == 0 {
		h.distinct++
	} else if entropy {
		h.sumClogC -= float64(*x) * math.Log2(float64(*x))
	}
	*x += n
	if entropy {
		h.sumClogC += float64(*x) * math.Log2(float64(*x))
	}
	h.n += int(n)
	if ci := c.cat[code]; ci >= 0 {
		if h.cats[ci] == 0 {
			h.dcats++
		}
		h.cats[ci] += n
	}
	h.weight += c.weight[code] * float64(n)
}

// RemoveCode removes one record of code (which h must hold).
func (c *Coded) RemoveCode(h *Hist, code int32) {
	x := &h.counts[code]
	entropy := c.Model.EntropyL > 1
	if entropy {
		h.sumClogC -= float64(*x) * math.Log2(float64(*x))
	}
	*x--
	if *x == 0 {
		h.distinct--
	} else if entropy {
		h.sumClogC += float64(*x) * math.Log2(float64(*x))
	}
	h.n--
	if ci := c.cat[code]; ci >= 0 {
		h.cats[ci]--
		if h.cats[ci] == 0 {
			h.dcats--
		}
	}
	h.weight -= c.weight[code]
}

// OK reports whether a class with histogram h satisfies the model.
func (c *Coded) OK(h *Hist) bool {
	m := &c.Model
	if h.distinct < m.L || h.dcats < m.PPlus || h.weight < m.Alpha-1e-9 {
		return false
	}
	if m.EntropyL > 1 {
		n := float64(h.n)
		if math.Log2(n)-h.sumClogC/n < math.Log2(m.EntropyL)-1e-12 {
			return false
		}
	}
	if m.RecursiveL > 1 {
		var ok bool
		ok, h.scratch = recursiveOK(h.counts, m.RecursiveC, m.RecursiveL, h.scratch)
		return ok
	}
	return true
}

// recursiveOK is recursive (c, l)-diversity: r₁ < c·(r_l + … + r_m). It
// sorts the counts in scratch (returned for reuse).
func recursiveOK(counts []int32, c float64, l int, scratch []int32) (bool, []int32) {
	rs := scratch[:0]
	for _, x := range counts {
		if x > 0 {
			rs = append(rs, x)
		}
	}
	if len(rs) < l {
		return false, rs
	}
	slices.SortFunc(rs, func(a, b int32) int { return int(b - a) })
	tail := 0.0
	for _, x := range rs[l-1:] {
		tail += float64(x)
	}
	return float64(rs[0]) < c*tail, rs
}

// Diverse reports whether the records rows, as one class, satisfy the model.
func (c *Coded) Diverse(rows []int32) bool {
	if c == nil {
		return true
	}
	h := c.NewHist()
	for _, r := range rows {
		c.Add(h, r)
	}
	return c.OK(h)
}

// scan returns ok[i]: whether rows[:i+1] satisfies the model (a prefix
// scan; pass the rows reversed for suffixes).
func (c *Coded) scan(rows []int32) []bool {
	h := c.NewHist()
	ok := make([]bool, len(rows))
	for i, r := range rows {
		c.Add(h, r)
		ok[i] = c.OK(h)
	}
	return ok
}
