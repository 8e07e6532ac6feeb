package boost

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"

	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// Model is a boosted model as result.json writes it: the margin of a join
// row is BaseScore plus the weights of the leaves it reaches, its
// probability of PositiveClass 1/(1+e^−margin) under logistic loss.
type Model struct {
	BaseScore     float64         `json:"base_score"`
	PositiveClass string          `json:"positive_class,omitempty"`
	Trees         []*tree.RegNode `json:"trees"`
}

// Train boosts in one process over the tables of g (data by table name),
// running every table's rounds and the class holder's in turn, with the
// gradient sums in the clear: the job's computation without its
// encryption and network, which the tests hold to the reference.
func Train(g *joinprop.Graph, data map[string]*table.Table, p Params) (*Model, error) {
	return TrainWith(g, data, p, Crypto{Ring: PlainRing{}, Seal: func(v Vec) (Sum, error) { return v, nil }, Open: OpenPlain})
}

// Crypto is how the sums that cross an edge are sealed, added and opened.
type Crypto struct {
	Ring Ring
	// Seal must be safe for concurrent use (sealing runs on every core).
	Seal func(Vec) (Sum, error)
	Open func(Sum) (Vec, error)
	// Layout is the packing of sealed sums, MaxWidth the most slots one
	// sealed sum holds (0: any), for re-used entries (reuse.go).
	Layout   Layout
	MaxWidth int
	// Unpack reads a bin sum of w values, the sum of n packed vectors,
	// from its plaintexts (Paillier's; the job's class holder opens the
	// joint decryption with it).
	Unpack func(pts []*big.Int, w int, n uint64) (Vec, error)
	// OpenBins opens a table's sealed bin sums at once, several bins per
	// decryption (compress.go); nil: Open, bin by bin.
	OpenBins func(SealedBins) (BinSums, error)
}

// TrainWith is Train with the sums that cross edges in c: the job's
// computation in one process, with its encryption when c is Paillier's.
func TrainWith(g *joinprop.Graph, data map[string]*table.Table, p Params, c Crypto) (*Model, error) {
	locals, pos, err := prepare(g, data, p)
	if err != nil {
		return nil, err
	}
	h := NewHolder(p)
	z := newSealer(c, p.Reuse)
	for !h.Done() {
		if err := level(g, locals, h, c, z); err != nil {
			return nil, err
		}
	}
	return model(h, locals, pos), nil
}

// prepare is every table's Local over data, and the positive class.
func prepare(g *joinprop.Graph, data map[string]*table.Table, p Params) ([]*Local, string, error) {
	pos := ""
	if p.Loss == LossLogistic {
		var err error
		if pos, err = PositiveClass(data[g.Target()], g.Class); err != nil {
			return nil, "", err
		}
	}
	locals := make([]*Local, len(g.Tables))
	for i, ti := range g.Tables {
		t := data[ti.Name]
		if t == nil {
			return nil, "", fmt.Errorf("%w: no data for table %q", ErrData, ti.Name)
		}
		l, err := NewLocal(g, ti.Name, t, p.Bins, p.Loss, pos)
		if err != nil {
			return nil, "", err
		}
		locals[i] = l
	}
	return locals, pos, nil
}

// model is the grown model, its splits' predicates from their tables.
func model(h *Holder, locals []*Local, pos string) *Model {
	trees := h.Trees(func(t, ord int) tree.Split { return locals[t].Predicate(ord) })
	return &Model{BaseScore: h.Base(), PositiveClass: pos, Trees: trees}
}

// upAll is a level's up pass over every table, children first: up[i] is
// table i's message to its parent.
func upAll(g *joinprop.Graph, locals []*Local) ([]ComboSummary, error) {
	up := make([]ComboSummary, len(g.Tables))
	for i := len(g.Tables) - 1; i > 0; i-- {
		e := g.Tables[i].Parent
		shared := joinprop.Intersect(locals[i].JoinValues(e), locals[g.Index(g.Edges[e].Parent)].JoinValues(e))
		s, err := locals[i].Up(childSums(g, i, up), shared)
		if err != nil {
			return nil, err
		}
		up[i] = s
	}
	return up, nil
}

// level runs one level of the current tree over every table.
func level(g *joinprop.Graph, locals []*Local, h *Holder, c Crypto, z *sealer) error {
	up, err := upAll(g, locals)
	if err != nil {
		return err
	}
	groups, k, err := locals[0].Groups(childSums(g, 0, up))
	if err != nil {
		return err
	}
	gv, err := h.Level(groups, locals[0].Labels())
	if err != nil || gv == nil {
		return err
	}
	sums := make([]BinSums, len(g.Tables))
	down := make([]DownSummary, len(g.Tables)) // down[i]: to table i
	var ds []DownSummary
	ds, sums[0] = locals[0].RootDown(groups, k, gv)
	for i := range ds {
		if err := z.seal(&ds[i], h.Depth()); err != nil {
			return err
		}
	}
	for j, e := range g.Tables[0].Children {
		down[e+1] = ds[j]
	}
	for i := 1; i < len(g.Tables); i++ {
		var sealed SealedBins
		if ds, sealed, err = locals[i].Down(c.Ring, down[i], childSums(g, i, up)); err != nil {
			return err
		}
		if c.OpenBins != nil {
			sums[i], err = c.OpenBins(sealed)
		} else {
			sums[i], err = Open(sealed, c.Open)
		}
		if err != nil {
			return err
		}
		for j, e := range g.Tables[i].Children {
			down[e+1] = ds[j]
		}
	}
	split(locals, h, sums)
	return nil
}

// split lets the class holder choose each open node's split from every
// table's bin sums and the winners make theirs.
func split(locals []*Local, h *Holder, sums []BinSums) {
	decisions := h.Choose(sums)
	if len(decisions) == 0 {
		return
	}
	ords := make([]int, len(decisions))
	for j, d := range decisions {
		ords[j] = locals[d.Table].Split(d.Feature, d.Bin)
	}
	h.Apply(decisions, ords)
}

// childSums lists the up messages of table i's children.
func childSums(g *joinprop.Graph, i int, up []ComboSummary) []ComboSummary {
	var out []ComboSummary
	for _, e := range g.Tables[i].Children {
		out = append(out, up[e+1])
	}
	return out
}

// JSON is the model as result.json writes it, with "<=" unescaped.
func (m *Model) JSON() ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(m); err != nil {
		return nil, fmt.Errorf("boost: model: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
