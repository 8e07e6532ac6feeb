package sjc

import (
	"fmt"
	"maps"
	"math"
	"math/bits"
	"slices"
	"strings"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc/internal/seccmp"
)

// params.hide_gains: the choice at a node without gains in the clear (the
// thesis's optional secure maximum, Xu §3.3.4, made concrete; package
// doc, "Hidden gains"). Every table's best gain is encoded as an integer
// (hiddenValue); the tables are the competitors, in the tie rule's order.
// For every pair of tables A before B, bit b(A, B) says whether B beats A
// by more than Eps: computed by their party when it holds both, else by a
// secure comparison (package seccmp) whose result ends up encrypted under
// the parties' joint key. Table t's count is
//
//	count(t) = Σ_{A before t} (1 − b(A, t)) + Σ_{t before B} b(t, B) + [t has no useful split]
//
// zero exactly when t beats every earlier table, no later table beats it
// and it has a split of positive gain: when t wins under the tie rule
// (provided no gains chain within Eps, package doc). Each table's count is
// blinded and jointly decrypted to the coordinator, which learns only
// which count is zero, if any: the winner, or a leaf.

// gainScale is the fixed point of a hidden gain: g is compared as
// round(g·2^48). Gains are at most log2 of the number of labels (< 64), so
// values stay below 2^55 and, doubled for the comparison, below 2^57.
const gainScale = 1 << 48

// epsUnits is Eps in gainScale units, rounded down (1e-12·2^48 =
// 281.47): a table beats an earlier one when its value exceeds the
// earlier's by more than this.
const epsUnits = 281

// hiddenValue is a table's value in the comparisons: 0 when the frontier
// is empty or its best gain is <= Eps (no useful split), else
// round(best·2^48) + epsUnits + 1, so that any useful table beats any
// useless one and two useful ones compare as their gains do (within the
// rounding of 2^-48).
func hiddenValue(front []Candidate) uint64 {
	if len(front) == 0 || !(front[len(front)-1].Gain > Eps) {
		return 0
	}
	g := min(front[len(front)-1].Gain, 64)
	return uint64(math.Round(g*gainScale)) + epsUnits + 1
}

// compareBits is the bit length of the comparisons' inputs with u class
// labels, and maxValue the largest value (hiddenValue) they carry: a gain
// is at most log2(u) (with a margin for float rounding), so with two labels
// the inputs have 50 bits, not 64 (public: the labels are).
func compareBits(u int) (n int, maxValue uint64) {
	maxValue = uint64(math.Round((math.Log2(float64(max(u, 2)))+1.0/(1<<20))*gainScale)) + epsUnits + 1
	x, _ := compareInputs(maxValue, maxValue)
	return bits.Len64(x), maxValue
}

// useful reports whether a frontier's best gain is above Eps.
func useful(front []Candidate) bool { return hiddenValue(front) > 0 }

// tablePair is one comparison at a node: table B (later in the tie rule's
// order) against table A (earlier). Its bit is "B beats A":
// value(B) > value(A) + epsUnits.
type tablePair struct{ A, B int }

// tableOrder is the graph's tables in the tie rule's order (party, then
// table name).
func tableOrder(g *Graph) []int {
	order := make([]int, len(g.Tables))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int {
		if x := strings.Compare(g.Tables[a].Party, g.Tables[b].Party); x != 0 {
			return x
		}
		return strings.Compare(g.Tables[a].Name, g.Tables[b].Name)
	})
	return order
}

// tablePairs is every pair of tables, A before B, in a fixed order every
// party derives alike.
func tablePairs(g *Graph) []tablePair {
	order := tableOrder(g)
	var out []tablePair
	for i, a := range order {
		for _, b := range order[i+1:] {
			out = append(out, tablePair{A: a, B: b})
		}
	}
	return out
}

// compareInputs are a pair's two inputs to the secure comparison, x from
// A's party (which encrypts) and y from B's (which evaluates), such that
// x < y exactly when B beats A; x is even and y odd, so they never meet.
func compareInputs(va, vb uint64) (x, y uint64) {
	return 2 * (va + epsUnits + 1), 2*vb + 1
}

// hiddenNode is a party's output at one open node with hidden gains, per
// table of the graph (graph order): C2[t] is, for the tables whose counts
// the party blinded a second time (those of the holder before it in name
// order: coBlinder), the C2 half of the table's count under the joint key
// (empty for other tables), and Partials[t] the party's partial decryption
// of table t's blinded count (seccmp.Partial). The coordinator puts them
// together into one bit per table: whether its count is zero, that is
// whether it wins (countOf). No gain, no comparison bit.
type hiddenNode struct {
	C2       [][]byte `msgpack:"c2"`
	Partials [][]byte `msgpack:"partials"`
}

// decideChooseHidden is decideChoose with hidden gains: each open node's
// winner is the table whose blinded count decrypts to zero, a leaf when
// none does. The committed winners carry no gain.
func decideChooseHidden(o *job.Outcome[offersOutput], g *Graph, nopen int) (chooseDecision, error) {
	if len(o.Failed) > 0 {
		if curable(o) {
			return chooseDecision{Retry: true}, nil
		}
		return chooseDecision{}, o.Err()
	}
	holders := g.PartiesBut("")
	d := chooseDecision{Winners: make([]winner, nopen)}
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		out := o.Results[name]
		if len(out.Nodes) > 0 {
			return chooseDecision{}, fmt.Errorf("party %s: offers gains, which hide_gains keeps at home", name)
		}
		if want := nopen * b2i(slices.Contains(holders, name)); len(out.Hidden) != want {
			return chooseDecision{}, fmt.Errorf("party %s: comparison outputs for %d nodes, want %d", name, len(out.Hidden), want)
		}
	}
	for _, p := range holders {
		if _, ok := o.Results[p]; !ok {
			return chooseDecision{}, fmt.Errorf("party %s: no comparison output", p)
		}
	}
	for i := range nopen {
		d.Winners[i] = winner{Table: -1}
		for t, info := range g.Tables {
			c2 := o.Results[coBlinder(g, info.Party)].Hidden[i].C2
			if len(c2) != len(g.Tables) {
				return chooseDecision{}, fmt.Errorf("party %s: comparison outputs of the wrong shape", coBlinder(g, info.Party))
			}
			var partials [][]byte
			for _, p := range holders {
				h := o.Results[p].Hidden[i]
				if len(h.Partials) != len(g.Tables) || len(h.C2) != len(g.Tables) || (len(h.C2[t]) > 0) != (p == coBlinder(g, info.Party)) {
					return chooseDecision{}, fmt.Errorf("party %s: comparison outputs of the wrong shape", p)
				}
				partials = append(partials, h.Partials[t])
			}
			zero, err := countZero(c2[t], partials)
			if err != nil {
				return chooseDecision{}, fmt.Errorf("table %q's count: %w", info.Name, err)
			}
			if zero && d.Winners[i].Table >= 0 {
				return chooseDecision{}, fmt.Errorf("tables %q and %q both win an open node: a party's comparison outputs are wrong", g.Tables[d.Winners[i].Table].Name, info.Name)
			}
			if zero {
				d.Winners[i].Table = t
			}
		}
	}
	return d, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// countZero decodes a table's blinded count (its C2 and every key
// holder's partial decryption) and reports whether it is zero.
func countZero(c2 []byte, partials [][]byte) (bool, error) {
	c, err := seccmp.ParseElements(c2, 1)
	if err != nil {
		return false, err
	}
	ds := make([]group.Element, len(partials))
	for k, b := range partials {
		d, err := seccmp.ParseElements(b, 1)
		if err != nil {
			return false, err
		}
		ds[k] = d[0]
	}
	return seccmp.IsZero(c[0], ds), nil
}

// hiddenPick is the candidate a winning table splits with: the first of
// its frontier (all within Eps of its best; the smallest key), or nil
// when it has no useful split.
func hiddenPick(front []Candidate) *Candidate {
	if !useful(front) {
		return nil
	}
	return &front[0]
}
