package profile

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/internal/sorted"
)

// Node is one interest of the profile: its label (terms merged by Rule 1
// joined by "/"; empty at the root), its support and its children by
// descending support. The root's support is |D|.
type Node struct {
	Label    string  `json:"label"`
	Sup      float64 `json:"sup"`
	Children []*Node `json:"children,omitempty"`
}

// Params are Build's thresholds: a term is frequent in at least MinSup
// documents, and Rules 1 and 2 fire above Delta.
type Params struct {
	MinSup int
	Delta  float64
}

// Check returns an error naming the parameter out of range.
func (p Params) Check() error {
	if p.MinSup < 1 {
		return fmt.Errorf("%w: minsup must be at least 1", ErrParams)
	}
	if !(p.Delta >= 0 && p.Delta <= 1) {
		return fmt.Errorf("%w: delta must be in [0, 1]", ErrParams)
	}
	return nil
}

// Build builds the hierarchical profile of docs (each a list of distinct
// terms, as ParseDocuments returns them) by BuildUP and Split (Xu, thesis,
// chapter 5, Figure 33).
func Build(docs [][]string, p Params) (*Node, error) {
	if err := p.Check(); err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: no documents", ErrDocuments)
	}
	b := builder{p: p, ids: map[string]int{}}
	b.docs = make([][]int, len(docs))
	for i, d := range docs {
		if len(d) == 0 {
			return nil, fmt.Errorf("%w: document %d has no terms", ErrDocuments, i+1)
		}
		seen := map[int]bool{}
		for _, t := range d {
			if t == "" || strings.Contains(t, "/") || !validTerm(t) {
				return nil, fmt.Errorf("%w: document %d: a term is empty, holds \"/\", a control character or is not UTF-8", ErrDocuments, i+1)
			}
			id, ok := b.ids[t]
			if !ok {
				id = len(b.terms)
				b.ids[t] = id
				b.terms = append(b.terms, t)
			}
			if !seen[id] {
				seen[id] = true
				b.docs[i] = append(b.docs[i], id)
			}
		}
	}
	all := make([]int, len(docs))
	w := make([]float64, len(docs))
	for i := range all {
		all[i], w[i] = i, 1
	}
	root := &Node{Sup: float64(len(docs))}
	b.buildUP(root, all, w, map[int]bool{})
	return root, nil
}

type builder struct {
	p     Params
	docs  [][]int // term ids of each document, distinct
	terms []string
	ids   map[string]int
}

// child is a node under construction. Its documents are positions in the
// parent's document list.
type child struct {
	labels []int   // term ids, in label order
	in     []bool  // in[i]: the parent's i-th document is in S
	d      [][]int // D of each label term, parent positions ascending
	node   *Node
}

// buildUP is BuildUP: split n over its documents s (weights w), then each
// child over its own. anc holds the terms of the ancestors' labels.
func (b *builder) buildUP(n *Node, s []int, w []float64, anc map[int]bool) {
	kids := b.split(s, anc)
	if len(kids) == 0 {
		return
	}
	// 1/n split: a document's weight is shared by the children holding it.
	shared := make([]int, len(s))
	for _, k := range kids {
		for i, in := range k.in {
			if in {
				shared[i]++
			}
		}
	}
	subs := make([][]int, len(kids))
	subw := make([][]float64, len(kids))
	for j, k := range kids {
		k.node = &Node{Label: b.label(k.labels)}
		for i, in := range k.in {
			if in {
				share := w[i] / float64(shared[i])
				k.node.Sup += share
				subs[j] = append(subs[j], s[i])
				subw[j] = append(subw[j], share)
			}
		}
	}
	order := make([]int, len(kids))
	for i := range order {
		order[i] = i
	}
	// Figure 33, line 9: siblings by descending support.
	slices.SortStableFunc(order, func(x, y int) int {
		if c := cmp.Compare(kids[y].node.Sup, kids[x].node.Sup); c != 0 {
			return c
		}
		return strings.Compare(kids[x].node.Label, kids[y].node.Label)
	})
	for _, j := range order {
		k := kids[j]
		n.Children = append(n.Children, k.node)
		sub := make(map[int]bool, len(anc)+len(k.labels))
		for t := range anc {
			sub[t] = true
		}
		for _, t := range k.labels {
			sub[t] = true
		}
		b.buildUP(k.node, subs[j], subw[j], sub)
	}
}

// split is Split (Figure 33, lines 1 to 8): the children of a node whose
// documents are s, by Rules 1 and 2 over its frequent terms.
func (b *builder) split(s []int, anc map[int]bool) []*child {
	// D(t) within s, as positions in s (ascending, as s is scanned in order).
	dt := map[int][]int{}
	for i, doc := range s {
		for _, t := range b.docs[doc] {
			if !anc[t] {
				dt[t] = append(dt[t], i)
			}
		}
	}
	var freq []int
	for t, d := range dt {
		if len(d) >= b.p.MinSup {
			freq = append(freq, t)
		}
	}
	// Line 1: descending document frequency; ties in byte order.
	slices.SortFunc(freq, func(x, y int) int {
		if c := cmp.Compare(len(dt[y]), len(dt[x])); c != 0 {
			return c
		}
		return strings.Compare(b.terms[x], b.terms[y])
	})
	var kids []*child
	for _, t := range freq {
		d := dt[t]
		// Lines 3 and 4, Rule 1: Sim(t_i, t_k) > δ.
		if k := best(kids, d, b.p.Delta, sim); k != nil {
			k.labels = append([]int{t}, k.labels...)
			k.d = append([][]int{d}, k.d...)
			add(k.in, d)
			continue
		}
		// Lines 5 and 6, Rule 2: P(t_k | t_i) > δ.
		if k := best(kids, d, b.p.Delta, cond); k != nil {
			add(k.in, d)
			continue
		}
		// Lines 7 and 8: a new child labelled t_i.
		k := &child{labels: []int{t}, in: make([]bool, len(s)), d: [][]int{d}}
		add(k.in, d)
		kids = append(kids, k)
	}
	return kids
}

// best is the child with the highest measure f(D(t_i), D(t_k)) above δ over
// its label terms t_k, the earliest on a tie, or nil.
func best(kids []*child, d []int, delta float64, f func(di, dk []int) float64) *child {
	var top *child
	hi := math.Inf(-1)
	for _, k := range kids {
		for _, dk := range k.d {
			if v := f(d, dk); v > delta && v > hi {
				top, hi = k, v
			}
		}
	}
	return top
}

// sim is Rule 1's Jaccard similarity |a∩b| / |a∪b|.
func sim(a, b []int) float64 {
	c := sorted.CountIntersect(a, b)
	return float64(c) / float64(len(a)+len(b)-c)
}

// cond is Rule 2's P(t_k | t_i) = |D(t_i)∩D(t_k)| / |D(t_i)|, a = D(t_i).
func cond(a, b []int) float64 {
	return float64(sorted.CountIntersect(a, b)) / float64(len(a))
}

func add(in []bool, d []int) {
	for _, i := range d {
		in[i] = true
	}
}

func (b *builder) label(ids []int) string {
	parts := make([]string, len(ids))
	for i, t := range ids {
		parts[i] = b.terms[t]
	}
	return strings.Join(parts, "/")
}
