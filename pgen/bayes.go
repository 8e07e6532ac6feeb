package pgen

import (
	"math"
	"slices"

	"github.com/cohortdm/cohort/tree"
)

// NaiveBayes is a naive Bayes classifier, one of the global models the
// paper learns from the pooled pseudo-rows besides the decision tree
// (Sharkey, Tian, Zhang, Xu, PinKDD 2007, §4: "Naive Bayes classifiers,
// conjunctive rules, decision tables, random forests and decision trees",
// Figures 5(b) and 6). The class prior and each categorical attribute's
// value counts per class are Laplace-smoothed; a numeric attribute is a
// normal distribution per class (its mean and standard deviation over the
// class's rows), as in the public Java implementation the paper names
// without kernel estimation. A standard deviation below Precision (a sixth
// of the smallest gap between the attribute's distinct values, 1 when
// there is no gap) is raised to it, so a constant attribute does not give
// infinite densities.
//
// It holds counts, means and deviations of the pseudo-rows, nothing that
// the published trees and the joint seed do not determine.
type NaiveBayes struct {
	Labels []string `json:"labels"`
	Prior  []uint64 `json:"prior"` // rows of each class
	Attrs  []NBAttr `json:"attrs"`
	Rows   uint64   `json:"rows"`
}

// NBAttr is one attribute's part of a NaiveBayes model.
type NBAttr struct {
	Name    string `json:"name"`
	Numeric bool   `json:"numeric"`
	// Categorical: the values and, per value, its rows of each class.
	Values []string   `json:"values,omitempty"`
	Counts [][]uint64 `json:"counts,omitempty"`
	// Numeric: per class, the mean and standard deviation, and the floor
	// of the deviation.
	Mean      []float64 `json:"mean,omitempty"`
	SD        []float64 `json:"sd,omitempty"`
	Precision float64   `json:"precision,omitempty"`
}

// LearnBayes counts a naive Bayes model from d.
func LearnBayes(d *tree.Data) *NaiveBayes {
	nc := len(d.Labels)
	m := &NaiveBayes{Labels: d.Labels, Prior: make([]uint64, nc), Rows: uint64(d.Rows())}
	for _, c := range d.Class {
		m.Prior[c]++
	}
	for _, a := range d.Attrs {
		na := NBAttr{Name: a.Name, Numeric: a.Numeric}
		if a.Numeric {
			na.Mean, na.SD = make([]float64, nc), make([]float64, nc)
			sum, sq := make([]float64, nc), make([]float64, nc)
			for i, x := range a.Num {
				sum[d.Class[i]] += x
			}
			for c := range nc {
				if m.Prior[c] > 0 {
					na.Mean[c] = sum[c] / float64(m.Prior[c])
				}
			}
			for i, x := range a.Num {
				c := d.Class[i]
				sq[c] += (x - na.Mean[c]) * (x - na.Mean[c])
			}
			na.Precision = precision(a.Num)
			for c := range nc {
				if m.Prior[c] > 1 {
					na.SD[c] = math.Sqrt(sq[c] / float64(m.Prior[c]-1))
				}
				na.SD[c] = max(na.SD[c], na.Precision)
			}
		} else {
			na.Values = a.Values
			na.Counts = make([][]uint64, len(a.Values))
			for v := range na.Counts {
				na.Counts[v] = make([]uint64, nc)
			}
			for i, v := range a.Code {
				na.Counts[v][d.Class[i]]++
			}
		}
		m.Attrs = append(m.Attrs, na)
	}
	return m
}

// precision is a sixth of the smallest gap between distinct values, or 1.
func precision(xs []float64) float64 {
	s := slices.Sorted(slices.Values(xs))
	s = slices.Compact(s)
	gap := math.Inf(1)
	for i := 1; i < len(s); i++ {
		gap = min(gap, s[i]-s[i-1])
	}
	if math.IsInf(gap, 1) {
		return 1
	}
	return gap / 6
}

// Classify returns the class index with the largest posterior for a row
// given by its attributes' values (value(name) returns a numeric value, or
// a categorical one, and whether the row has the attribute). A categorical
// value the model does not know counts as Other when the model has Other,
// and is skipped otherwise; so is an attribute the row lacks. Ties go to
// the smaller class index.
func (m *NaiveBayes) Classify(value func(name string) (float64, string, bool)) int {
	nc := len(m.Labels)
	score := make([]float64, nc)
	for c := range nc {
		// Laplace-smoothed prior: (n_c + 1) / (n + |C|).
		score[c] = math.Log(float64(m.Prior[c]+1) / float64(m.Rows+uint64(nc)))
	}
	for _, a := range m.Attrs {
		x, s, ok := value(a.Name)
		if !ok {
			continue
		}
		if a.Numeric {
			for c := range nc {
				// log of the normal density N(x; μ_c, σ_c).
				z := (x - a.Mean[c]) / a.SD[c]
				score[c] += -0.5*z*z - math.Log(a.SD[c]*math.Sqrt(2*math.Pi))
			}
			continue
		}
		v, found := slices.BinarySearch(a.Values, s)
		if !found {
			if v, found = slices.BinarySearch(a.Values, Other); !found {
				continue
			}
		}
		for c := range nc {
			// P(v | c) = (n_{v,c} + 1) / (n_c + |V|).
			score[c] += math.Log(float64(a.Counts[v][c]+1) / float64(m.Prior[c]+uint64(len(a.Values))))
		}
	}
	best := 0
	for c := 1; c < nc; c++ {
		if score[c] > score[best] {
			best = c
		}
	}
	return best
}

// GlobalBayes is the naive Bayes model the coordinator learns with
// params.naive_bayes: from the pseudo-rows Global grows its tree on (the
// same trees, schema and joint seed give the same rows).
func GlobalBayes(trees []*tree.Tree, s *Schema, seed []byte) *NaiveBayes {
	return LearnBayes(pseudoRows(trees, s, seed))
}

// CorrectBayes counts the rows of d that m classifies as their class (a
// label of d that m does not have counts as wrong).
func CorrectBayes(m *NaiveBayes, d *tree.Data) int {
	return correct(m.Classify, m.Labels, d)
}

// correct counts the rows of d that classify, which reads a row by
// attribute name, puts in their class (an index into labels).
func correct(classify func(func(string) (float64, string, bool)) int, labels []string, d *tree.Data) int {
	byName := map[string]*tree.Attr{}
	for _, a := range d.Attrs {
		byName[a.Name] = a
	}
	right := 0
	for i := range d.Rows() {
		c := classify(func(name string) (float64, string, bool) {
			a, ok := byName[name]
			switch {
			case !ok:
				return 0, "", false
			case a.Numeric:
				return a.Num[i], "", true
			}
			return 0, a.Values[a.Code[i]], true
		})
		if labels[c] == d.Labels[d.Class[i]] {
			right++
		}
	}
	return right
}
