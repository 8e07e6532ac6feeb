package sjc

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job"
)

// params.hide_gains: the choice at a node without gains in the clear (the
// thesis's optional secure maximum, Xu §3.3.4, made concrete; package
// doc, "Hidden gains"). Every table's best gain is encoded as an integer
// (hiddenValue); the tables are the competitors, in the tie rule's order;
// for every pair of tables of two parties the coordinator learns, through
// a secure comparison (package seccmp) whose result only it can put
// together, whether the later table beats the earlier by more than Eps;
// for a pair of one party's tables, that party says so. The coordinator
// folds these bits into the winner (hiddenWinner); no gain leaves a party.

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

// Share encodings in hiddenNode.
const (
	shareNone  uint8 = 0 // not this party's
	shareFalse uint8 = 1
	shareTrue  uint8 = 2
)

func shareOf(b bool) uint8 {
	if b {
		return shareTrue
	}
	return shareFalse
}

// hiddenNode is a party's output at one open node with hidden gains:
// Useful[t] for each of its tables t (shareFalse: no split of gain above
// Eps), and Shares[k] for each pair of tablePairs it takes part in: the
// bit itself for a pair of its own tables, else its share (β as the
// encrypting party, δ as the evaluating one), whose XOR with the other
// party's share is the bit. Zero (shareNone) elsewhere.
type hiddenNode struct {
	Useful []uint8 `msgpack:"useful"`
	Shares []uint8 `msgpack:"shares"`
}

// decideChooseHidden is decideChoose with hidden gains: each open node's
// winner from the comparison bits the parties' shares make, or a leaf
// when no table has a useful split. The committed winners carry no gain.
func decideChooseHidden(o *job.Outcome[offersOutput], g *Graph, nopen int) (chooseDecision, error) {
	if len(o.Failed) > 0 {
		if curable(o) {
			return chooseDecision{Retry: true}, nil
		}
		return chooseDecision{}, o.Err()
	}
	pairs := tablePairs(g)
	useful := make([][]uint8, nopen)
	bits := make([][][2]uint8, nopen) // per node, per pair: A's party's share, B's
	for i := range nopen {
		useful[i] = make([]uint8, len(g.Tables))
		bits[i] = make([][2]uint8, len(pairs))
	}
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		if err := mergeHidden(g, pairs, name, o.Results[name], useful, bits); err != nil {
			return chooseDecision{}, err
		}
	}
	d := chooseDecision{Winners: make([]winner, nopen)}
	for i := range nopen {
		w, err := hiddenWinner(g, pairs, useful[i], bits[i])
		if err != nil {
			return chooseDecision{}, err
		}
		d.Winners[i] = winner{Table: w}
	}
	return d, nil
}

// mergeHidden puts party name's shares into useful and bits, refusing a
// share for a table or pair that is not the party's.
func mergeHidden(g *Graph, pairs []tablePair, name string, o offersOutput, useful [][]uint8, bits [][][2]uint8) error {
	if len(o.Nodes) > 0 {
		return fmt.Errorf("party %s: offers gains, which hide_gains keeps at home", name)
	}
	if len(o.Hidden) != len(useful) {
		return fmt.Errorf("party %s: comparison shares for %d nodes, want %d", name, len(o.Hidden), len(useful))
	}
	owns := func(t int) bool { return g.Tables[t].Party == name }
	for i, h := range o.Hidden {
		if len(h.Useful) != len(g.Tables) || len(h.Shares) != len(pairs) {
			return fmt.Errorf("party %s: comparison shares of the wrong shape", name)
		}
		for t, u := range h.Useful {
			if (u != shareNone) != owns(t) || u > shareTrue {
				return fmt.Errorf("party %s: a usefulness bit for table %q", name, g.Tables[t].Name)
			}
			if u != shareNone {
				useful[i][t] = u
			}
		}
		for k, s := range h.Shares {
			pr := pairs[k]
			mine := owns(pr.A) || owns(pr.B)
			if (s != shareNone) != mine || s > shareTrue {
				return fmt.Errorf("party %s: a comparison share for tables %q and %q", name, g.Tables[pr.A].Name, g.Tables[pr.B].Name)
			}
			if owns(pr.A) {
				bits[i][k][0] = s
			}
			if owns(pr.B) {
				bits[i][k][1] = s
			}
		}
	}
	return nil
}

// hiddenWinner runs the tie rule's tournament over the comparison bits:
// the champion starts as the first table in the tie rule's order, and
// each later table takes over when it beats the champion by more than
// Eps. The winner is -1 (a leaf) when it has no useful split, which
// happens only when no table has one.
func hiddenWinner(g *Graph, pairs []tablePair, useful []uint8, bits [][2]uint8) (int, error) {
	beats := map[tablePair]bool{}
	for k, pr := range pairs {
		sa, sb := bits[k][0], bits[k][1]
		if sa == shareNone || sb == shareNone {
			return 0, fmt.Errorf("no comparison share from party %s or %s for tables %q and %q",
				g.Tables[pr.A].Party, g.Tables[pr.B].Party, g.Tables[pr.A].Name, g.Tables[pr.B].Name)
		}
		if g.Tables[pr.A].Party == g.Tables[pr.B].Party {
			beats[pr] = sa == shareTrue // the party's own bit, given once
			continue
		}
		beats[pr] = (sa == shareTrue) != (sb == shareTrue)
	}
	order := tableOrder(g)
	c := order[0]
	for _, t := range order[1:] {
		if beats[tablePair{A: c, B: t}] {
			c = t
		}
	}
	if useful[c] != shareTrue {
		return -1, nil
	}
	return c, nil
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
