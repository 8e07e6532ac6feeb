package boost

import (
	"math"
	"strings"
)

// FracBits is the fixed point of gradients and hessians: a value x is
// carried as round(x·2^FracBits), so every sum is exact and the same in
// whatever order the join rows are added.
const FracBits = 30

// Gain tolerance: a node splits only when its best gain exceeds it
// (XGBoost's kRtEps).
const minGain = 1e-6

// Fixed is x in fixed point.
func Fixed(x float64) int64 { return int64(math.Round(x * (1 << FracBits))) }

// Float is a fixed-point sum as a float.
func Float(v int64) float64 { return float64(v) / (1 << FracBits) }

// node is a node of the tree being grown, as the class holder knows it:
// the winning table and the ordinal of its split in that table's
// signatures; the column, bin and threshold only the owner needs.
type node struct {
	depth       int
	split       *splitRef
	left, right *node
	weight      float64
	g, h        int64
}

type splitRef struct {
	Table, Ordinal int
	Feature, Bin   int
	Gain           float64
}

// leafOf walks n with a group's signatures (sigs[t] is table t's).
func leafOf(n *node, sigs []string) *node {
	for n.split != nil {
		if sigs[n.split.Table][n.split.Ordinal] == '0' {
			n = n.left
		} else {
			n = n.right
		}
	}
	return n
}

// sigsOf splits a group's combo into the tables' signatures.
func sigsOf(combo string) []string { return strings.Split(combo, "|") }

// LeafWeight is XGBoost's optimal leaf weight −G/(H+λ) times the learning
// rate.
func LeafWeight(g, h int64, p Params) float64 {
	d := Float(h) + p.Lambda
	if d == 0 {
		return 0
	}
	return -Float(g) / d * p.LearningRate
}

// Score is XGBoost's structure score G²/(H+λ) of a node.
func Score(g, h int64, lambda float64) float64 {
	d := Float(h) + lambda
	if d == 0 {
		return 0
	}
	x := Float(g)
	return x * x / d
}

// GradHess is the gradient and hessian of the loss at margin m for label y.
func GradHess(m, y float64, loss string) (float64, float64) {
	if loss == LossSquared {
		return m - y, 1
	}
	p := 1 / (1 + math.Exp(-m))
	return p - y, p * (1 - p)
}

// BaseScore is the starting margin: the logit of the positive share of
// the join rows (logistic) or their mean label (squared). wy is the sum of
// the labels over the join rows, n their number.
func BaseScore(wy float64, n uint64, loss string) float64 {
	mean := wy / float64(n)
	if loss == LossSquared {
		return mean
	}
	mean = min(max(mean, 1e-6), 1-1e-6)
	return math.Log(mean / (1 - mean))
}

// best is the best split of open node i over every table's bin sums
// (sums[t] nil for a table without features): the first candidate in
// (table, feature, bin) order with the largest gain, if it beats minGain.
func best(sums []BinSums, i int, nd *node, p Params) *splitRef {
	parent := Score(nd.g, nd.h, p.Lambda)
	var out *splitRef
	for t, bs := range sums {
		for f, bins := range bs {
			var gl, hl int64
			for b := 0; b+1 < len(bins); b++ {
				if v := bins[b]; v != nil {
					gl, hl = gl+v[2*i], hl+v[2*i+1]
				}
				gr, hr := nd.g-gl, nd.h-hl
				if Float(hl) < p.MinChildWeight || Float(hr) < p.MinChildWeight {
					continue
				}
				gain := Score(gl, hl, p.Lambda) + Score(gr, hr, p.Lambda) - parent
				if gain > minGain && (out == nil || gain > out.Gain) {
					out = &splitRef{Table: t, Feature: f, Bin: b, Gain: gain}
				}
			}
		}
	}
	return out
}
