package boost

// How the class holder groups a level's open nodes into layouts on the
// lattice path, and how a table's party sums a level's layouts.
//
// A layout of g nodes a slot puts a row in 2·g·bins coefficients, so its
// chunks are g times as many as one node's, and a table's party makes one
// plaintext W (an NTT) per chunk and group of columns (lattice_pack.go).
// Layouts of the same node count over the same entries have the same Ws
// (a W depends on the entries' rows and bins, never on the gradients),
// so a party sent L
// layouts of g nodes makes each W once for all of them
// (lattice.BinSummer.SumTermsEach) and, at one node a slot, every level
// of every tree has the same layout, whose Ws the kept-W cache serves
// from one level to the next. What a layout costs beyond its products is
// one mask (a fresh encryption) and one decryption per group. Encryptions
// of gradients and products are the same whatever the grouping (k nodes
// take k chunks' worth of ciphertexts either way). So per level and
// group, L = k/g layouts of g nodes cost about g·chunks1 Ws (chunks1: the
// chunks at one node a slot) and k/g masks and decryptions, least at
// g = √(k·layoutCost/chunks1), where layoutCost is a mask and its
// decryption in Ws' time.
//
// What it discloses: nothing new. The down message's head names the
// layouts' node counts, as before; their sum is the number of nodes
// summed under encryption, which the head told before too.

import (
	"math"

	"github.com/cohortdm/cohort/lattice"
	"github.com/tuneinsight/lattigo/v6/core/rlwe"
)

// layoutCost is a layout's fixed cost per group in W's time: a mask (one
// public-key encryption of a full plaintext), its decryption (every
// decryptor's vetting hash and share, the class holder's folding) and the
// ciphertexts' bytes, against a W's sparse NTT. It was 16 when a W took
// about 0.34 ms, and 64 once the W transform had become two to three
// times faster (docs/boost.md, "A faster W transform"; a9a in one process
// fastest near 64 then). On 30 Nov 2026, with the deeper layouts' Ws
// sparser and a level of one layout summed as its parts come, 256 was
// faster on a9a (depth 6, two trees: one layout at every level) both over
// real nodes (level steps 3.84-4.01 s against 4.06-4.25 s, four
// interleaved pairs; 128 between) and in one process (1.55-1.58 s a tree
// against 1.63-1.69 s), and the same on default_credit, whose levels keep
// one node a layout (docs/boost.md, "Sixteenth session").
const layoutCost = 256

// layoutNodes splits k open nodes summed under encryption into layouts
// for bins bins and entries entries: node counts, as many layouts as k/g
// rounded up (g as above; at most lattice.MaxNodes, or maxNodes when
// positive), each as large as the others but the last.
func layoutNodes(p lattice.Params, bins, k, entries, maxNodes int) []int {
	per := lattice.MaxNodes(p, bins)
	if maxNodes > 0 {
		per = min(per, maxNodes)
	}
	one, err := lattice.NewNodeBinLayout(p, bins, 1)
	g := per
	if err == nil && entries > 0 {
		chunks := float64(one.Chunks(entries))
		g = int(math.Round(math.Sqrt(float64(k) * layoutCost / chunks)))
	}
	g = max(1, min(g, per, k))
	// As many layouts as g gives, as even as they go: layouts of one node
	// count share their Ws, so [4 4] makes half the Ws of [6 2].
	layouts := (k + g - 1) / g
	g = (k + layouts - 1) / layouts
	var out []int
	for n := 0; n < k; n += g {
		out = append(out, min(g, k-n))
	}
	return out
}

// sumLayouts is the table's: every layout's masked bin sums, layout by
// layout, group by group (lattice_pack.go), over all, the layouts'
// ciphertexts one after the other (counts: their node counts, over n
// entries). Layouts of one
// node count are summed together, each chunk's W made once for them;
// the masks' encryptions of zero from zeros while it has them (nil: none).
func sumLayouts(pk *lattice.PublicKey, zeros *lattice.ZeroPool, bins int, counts []int, n int, l *Local, entries [][]rowCount, all []*rlwe.Ciphertext) ([]*rlwe.Ciphertext, error) {
	type group struct {
		lay  *lattice.BinLayout
		at   []int // the layouts' indices
		sets [][]*rlwe.Ciphertext
	}
	var groups []*group
	byNodes := map[int]*group{}
	for i, k := range counts {
		lay, err := lattice.NewNodeBinLayout(pk.Params, bins, k)
		if err != nil {
			return nil, err
		}
		chunks := lay.Chunks(n)
		gr := byNodes[k]
		if gr == nil {
			gr = &group{lay: lay}
			byNodes[k] = gr
			groups = append(groups, gr)
		}
		gr.at, gr.sets = append(gr.at, i), append(gr.sets, all[:chunks])
		all = all[chunks:]
	}
	pack, err := l.pack(bins)
	if err != nil {
		return nil, err
	}
	cols := pack.groups
	out := make([]*rlwe.Ciphertext, len(counts)*cols)
	for _, gr := range groups {
		ss, err := sumGroups(pk, zeros, gr.lay, l, &pack, entries, gr.sets)
		if err != nil {
			return nil, err
		}
		for j, at := range gr.at {
			copy(out[at*cols:(at+1)*cols], ss[j])
			clear(gr.sets[j]) // summed: let them go
		}
	}
	return out, nil
}
