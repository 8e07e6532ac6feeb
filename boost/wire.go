package boost

import (
	"errors"
	"fmt"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/table"
)

// ErrWire: a message of the job does not decode or does not fit.
var ErrWire = errors.New("boost: malformed message")

// wireDown is a DownSummary of Packed sums on the wire: per join value
// the combos, each entry's summand count, and every entry's K ciphertexts
// of W packed values, concatenated in entry order; a re-used entry
// (reuse.go) has Ref, the index of its first-level entry, and Node, and
// no ciphertext (Ref -1 for the others).
type wireDown struct {
	Edge   int        `msgpack:"edge"`
	Values []string   `msgpack:"values"`
	Combos [][]string `msgpack:"combos"`
	N      [][]uint64 `msgpack:"n"`
	W      int        `msgpack:"w"`
	K      int        `msgpack:"k"`
	C      []byte     `msgpack:"c"`
	First  bool       `msgpack:"first"`
	Width  int        `msgpack:"width"`
	Layout Layout     `msgpack:"layout"`
	Ref    [][]int    `msgpack:"ref"`
	Node   [][]int    `msgpack:"node"`
}

// reuses reports whether w names any re-used entry (its ledger form is
// then split-summary: it tells the receiver its entries' nodes).
func (w *wireDown) reuses() bool {
	for _, rs := range w.Ref {
		for _, r := range rs {
			if r >= 0 {
				return true
			}
		}
	}
	return false
}

// encodeDown puts a sealed DownSummary on the wire.
func encodeDown(pk *paillier.PublicKey, ds DownSummary) (*wireDown, error) {
	w := &wireDown{Edge: ds.Edge, Values: ds.Values, Combos: make([][]string, len(ds.Entries)), N: make([][]uint64, len(ds.Entries)),
		First: ds.First, Width: ds.Width, Layout: ds.Layout, Ref: make([][]int, len(ds.Entries)), Node: make([][]int, len(ds.Entries))}
	var cts []*paillier.Ciphertext
	for i, es := range ds.Entries {
		for _, e := range es {
			w.Combos[i] = append(w.Combos[i], e.Combo)
			if e.Reuse != nil {
				w.N[i] = append(w.N[i], 1) // the one sealed vector it re-uses
				w.Ref[i], w.Node[i] = append(w.Ref[i], e.Reuse.Ref), append(w.Node[i], e.Reuse.Node)
				continue
			}
			w.Ref[i], w.Node[i] = append(w.Ref[i], -1), append(w.Node[i], -1)
			p, ok := e.Sums.(*Packed)
			if !ok {
				return nil, fmt.Errorf("boost: a down summary's sums are not sealed")
			}
			if w.K == 0 {
				w.W, w.K = p.W, len(p.C)
			}
			if p.W != w.W || len(p.C) != w.K {
				return nil, fmt.Errorf("boost: a down summary's sums differ in width")
			}
			w.N[i] = append(w.N[i], p.N)
			cts = append(cts, p.C...)
		}
	}
	var err error
	if w.C, err = pk.MarshalCiphertexts(cts); err != nil {
		return nil, fmt.Errorf("boost: marshal ciphertexts: %w", err)
	}
	return w, nil
}

// decode checks a wireDown against edge e and returns its DownSummary.
func (w *wireDown) decode(pk *paillier.PublicKey, e int) (DownSummary, error) {
	if w.Edge != e || len(w.Combos) != len(w.Values) || len(w.N) != len(w.Values) || len(w.Ref) != len(w.Values) ||
		len(w.Node) != len(w.Values) || w.K < 0 || w.W < 0 {
		return DownSummary{}, fmt.Errorf("%w: a down summary does not fit edge %d", ErrWire, e)
	}
	cts, err := pk.UnmarshalCiphertexts(w.C)
	if err != nil {
		return DownSummary{}, fmt.Errorf("%w: %w", ErrWire, err)
	}
	ds := DownSummary{Edge: e, Values: w.Values, Entries: make([][]DownEntry, len(w.Values)), First: w.First, Width: w.Width, Layout: w.Layout}
	for i := range w.Values {
		if i > 0 && w.Values[i] <= w.Values[i-1] {
			return DownSummary{}, fmt.Errorf("%w: a down summary's join values are not sorted", ErrWire)
		}
		if len(w.N[i]) != len(w.Combos[i]) || len(w.Ref[i]) != len(w.Combos[i]) || len(w.Node[i]) != len(w.Combos[i]) {
			return DownSummary{}, fmt.Errorf("%w: a down summary's counts do not fit its combos", ErrWire)
		}
		for j, c := range w.Combos[i] {
			if w.Ref[i][j] >= 0 {
				ds.Entries[i] = append(ds.Entries[i], DownEntry{Combo: c, Reuse: &Reuse{Ref: w.Ref[i][j], Node: w.Node[i][j]}})
				continue
			}
			if len(cts) < w.K {
				return DownSummary{}, fmt.Errorf("%w: a down summary holds too few ciphertexts", ErrWire)
			}
			ds.Entries[i] = append(ds.Entries[i], DownEntry{Combo: c, Sums: &Packed{C: cts[:w.K:w.K], N: w.N[i][j], W: w.W}})
			cts = cts[w.K:]
		}
	}
	if len(cts) != 0 {
		return DownSummary{}, fmt.Errorf("%w: a down summary holds too many ciphertexts", ErrWire)
	}
	return ds, nil
}

// binEntry names one non-empty encrypted bin sum of a party's tables.
type binEntry struct {
	Table   int    `msgpack:"table"`
	Feature int    `msgpack:"feature"`
	Bin     int    `msgpack:"bin"`
	N       uint64 `msgpack:"n"`
	W       int    `msgpack:"w"`
	K       int    `msgpack:"k"`
}

// wireBins is a party's encrypted bin sums, to the class holder: entries
// in (table, feature, bin) order and their ciphertexts concatenated,
// several to one (compress.go) if SlotBits, the slot width it used, is
// not 0.
type wireBins struct {
	Entries  []binEntry `msgpack:"entries"`
	C        []byte     `msgpack:"c"`
	SlotBits int        `msgpack:"slot_bits"`
}

// flattenBins lists the non-empty sealed bins of table t in (feature,
// bin) order, with their ciphertexts.
func flattenBins(t int, bs SealedBins) ([]binEntry, []*paillier.Ciphertext, error) {
	var es []binEntry
	var cts []*paillier.Ciphertext
	for f, bins := range bs {
		for b, s := range bins {
			if s == nil {
				continue
			}
			p, ok := s.(*Packed)
			if !ok {
				return nil, nil, fmt.Errorf("boost: table %d's bin sums are not sealed", t)
			}
			es = append(es, binEntry{Table: t, Feature: f, Bin: b, N: p.N, W: p.W, K: len(p.C)})
			cts = append(cts, p.C...)
		}
	}
	return es, cts, nil
}

// maxBins bounds a feature's bins (params.bins is at most 1024).
const maxBins = 1025

// numericCount is the number of features (numeric columns) of table t.
func numericCount(g *joinprop.Graph, t int) int {
	n := 0
	for _, c := range g.Tables[t].Columns {
		if c.Kind == table.Numeric {
			n++
		}
	}
	return n
}
