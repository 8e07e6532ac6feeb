package sjc

import (
	"fmt"
	"math"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/tree"
)

// Params are the tree-growing parameters of an sjc spec (params:), with
// the defaults of DefaultParams.
type Params struct {
	// MaxDepth: a node at this depth (the root has depth 0) is a leaf.
	MaxDepth int `yaml:"max_depth"`
	// MinSplit: a node with fewer training join rows is a leaf.
	MinSplit uint64 `yaml:"min_split"`
	// Prune turns C4.5 pessimistic pruning (CF 0.25) on.
	Prune bool `yaml:"prune"`
	// ReleaseK, when above 0, prunes the finished tree (after C4.5) until
	// every leaf holds at least ReleaseK join rows (tree.ReleasePrune:
	// anonymity-based tree pruning), so that neither the public skeleton
	// nor any party's kept model has a path whose group of join rows is
	// smaller.
	ReleaseK uint64 `yaml:"release_k"`
	// ReleaseL and ReleaseC, when ReleaseL is at least 2, add recursive
	// (ReleaseC, ReleaseL)-diversity of every leaf's class counts to the
	// release requirement (tree.Requirement), pruned for by the same ATP.
	ReleaseL int     `yaml:"release_l"`
	ReleaseC float64 `yaml:"release_c"`
	// JoinSplits makes key (join) columns split candidates, as categorical
	// attributes. Off by default: a split on a join attribute tells the
	// neighbour, through the split summary, exactly which shared values went
	// where.
	JoinSplits bool `yaml:"join_splits"`
	// PSI is the protocol of each edge's private set intersection: "auto"
	// (the default: ECDH when the two parties' distinct join values add up
	// to fewer than 1024, the OT-extension PSI from there), "ot", "vole"
	// (the VOLE-based PSI) or "ecdh" (package psi). The tree does not
	// depend on it.
	PSI string `yaml:"psi"`
	// HideGains keeps every gain at its party: the coordinator learns,
	// per open node, only which table wins, or a leaf (package doc,
	// "Hidden gains"), never a gain or a comparison of two gains, and the
	// log holds no gain. Off by default: it costs a secure comparison
	// per pair of tables of two parties per open node.
	HideGains bool `yaml:"hide_gains"`
	// TimeoutMS is the timeout of each step of the job (the node's default
	// when 0).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

// Eps is the gain tolerance of the tree semantics (package doc,
// "Decisions"): gains within Eps are equal (the tie rule decides), and a
// best gain <= Eps stops growth.
const Eps = 1e-12

// DefaultParams are the defaults: depth at most 10, at least 2 join rows
// to split, C4.5 pruning on, PSI auto.
func DefaultParams() Params {
	return Params{MaxDepth: 10, MinSplit: 2, Prune: true, PSI: "auto"}
}

// ParseParams reads a spec's params over the defaults, refusing unknown
// fields and out-of-range values with an error naming the field.
func ParseParams(spec *job.Spec) (Params, error) {
	p := DefaultParams()
	if err := spec.DecodeParams(&p); err != nil {
		return p, err
	}
	if p.MaxDepth < 0 || p.MaxDepth > 64 {
		return p, spec.Errorf("params.max_depth", "must be in [0, 64], not %d", p.MaxDepth)
	}
	if _, err := psiMode(spec, p.PSI); err != nil {
		return p, err
	}
	if f, why := p.release().Check(); f != "" {
		return p, spec.Errorf("params."+f, "%s", why)
	}
	return p, nil
}

// psiMode reads params.psi ("" is the default, auto).
func psiMode(spec *job.Spec, s string) (psi.Mode, error) {
	if s == "" {
		return psi.ModeAuto, nil
	}
	m, err := psi.ParseMode(s)
	if err != nil {
		return 0, spec.Errorf("params.psi", "%q: want auto, ot, vole or ecdh", s)
	}
	return m, nil
}

// Stop reports whether a node with these class counts at this depth is a
// leaf before any split is sought: pure, fewer than min_split join rows,
// or at max_depth. The coordinator decides it from the
// skeleton's public counts.
func Stop(counts []uint64, depth int, p Params) bool {
	var n uint64
	nz := 0
	for _, c := range counts {
		if n += c; n < c {
			n = math.MaxUint64 // saturate: only n < min_split matters
		}
		if c > 0 {
			nz++
		}
	}
	return nz <= 1 || n < p.MinSplit || depth >= p.MaxDepth
}

// PruneTree prunes a finished tree as the params ask: C4.5 pessimistic
// pruning, then anonymity-based release pruning to ReleaseK and, with
// ReleaseL, (ReleaseC, ReleaseL)-diversity. It returns the internal nodes
// each made leaves; tree.ErrAnonymity, naming the params, when the whole
// tree does not meet the requirement.
func (p Params) PruneTree(t *tree.Tree) (c45, release int, err error) {
	if p.Prune {
		c45 = t.Prune(tree.DefaultCF)
	}
	if p.ReleaseK == 0 && p.ReleaseL < 2 {
		return c45, 0, nil
	}
	if release, err = t.PruneTo(p.release()); err != nil {
		field := "params.release_k"
		if p.ReleaseL >= 2 {
			field = "params.release_l"
			if p.ReleaseK > 0 {
				field = "params.release_k, params.release_l"
			}
		}
		return c45, release, fmt.Errorf("%s: %w", field, err)
	}
	return c45, release, nil
}

// release is the release requirement of the params.
func (p Params) release() tree.Requirement {
	return tree.Requirement{K: p.ReleaseK, C: p.ReleaseC, L: p.ReleaseL}
}
