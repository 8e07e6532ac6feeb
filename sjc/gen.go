package sjc

import (
	"encoding/csv"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// ChainParams are the parameters of the synthetic chain-join generator of
// Xu's thesis §3.4.1.
type ChainParams struct {
	Tables int    // k, the number of tables in the chain T1 - T2 - ... - Tk
	N      int    // about N records per table
	V      int    // join values (groups) per join attribute
	X      int    // numeric and categorical attributes per table (X of each)
	Seed   uint64 // train uses stream 1 of the seed, test stream 2
}

// Chain is one generated data set: a spec (one party per table, pi holds
// Ti, paths Ti.csv and tests Ti_test.csv), and the train and test tables.
type Chain struct {
	Spec        *job.Spec
	Train, Test map[string]*table.Table
}

// GenChain generates the thesis's synthetic chain join. Each table Ti has
// X numeric attributes a1..aX with ranked domain {1..m}, m = min(N, 10000),
// and X categorical noise attributes c1..cX over 20 values. Ti and Ti+1
// join on ki (Ti.ki = Ti+1.ki). There are V join groups: group j has S_j
// ~ Poisson(N/V) records in every table, all with join value j, so its
// join rows number S_j^k. For group j, h_j is drawn uniformly from the
// integers {0..k·X} and split into h_j1 + ... + h_jk with every part <= X
// (one unit at a time to a uniformly chosen table with room); each record
// of Ti in group j has h_ji of its numeric attributes, chosen per record,
// in the top half {m/2+1..m} of the domain and the others in the bottom
// half {1..m/2}. The class, in T1, is Yes for the whole group when
// h_j >= k·X/2, else No. Train and test sets are drawn independently.
// Decisions on what the thesis leaves open (integer h_j, cap at X, per-
// record choice of top attributes) are ours.
func GenChain(p ChainParams) (*Chain, error) {
	switch {
	case p.Tables < 1 || p.Tables > 64:
		return nil, fmt.Errorf("sjc: chain generator: tables must be in [1, 64], not %d", p.Tables)
	case p.N < 2:
		return nil, fmt.Errorf("sjc: chain generator: N must be at least 2, not %d", p.N)
	case p.V < 1 || p.V > p.N:
		return nil, fmt.Errorf("sjc: chain generator: V must be in [1, N], not %d", p.V)
	case p.X < 0 || p.X > 1000:
		return nil, fmt.Errorf("sjc: chain generator: X must be in [0, 1000], not %d", p.X)
	}
	spec := &job.Spec{Kind: "sjc", Schema: map[string]map[string]string{}, Test: map[string]string{}}
	for i := 1; i <= p.Tables; i++ {
		name := fmt.Sprintf("T%d", i)
		spec.Parties = append(spec.Parties, job.PartySpec{Name: fmt.Sprintf("p%d", i), Tables: []job.TableSpec{{Name: name, Path: name + ".csv"}}})
		spec.Test[name] = name + "_test.csv"
		s := map[string]string{}
		for _, c := range chainColumns(p, i) {
			s[c.Name] = string(c.Kind)
		}
		spec.Schema[name] = s
		if i < p.Tables {
			spec.Join = append(spec.Join, fmt.Sprintf("T%d.k%d = T%d.k%d", i, i, i+1, i))
		}
	}
	return &Chain{Spec: spec, Train: genChainSet(p, 1), Test: genChainSet(p, 2)}, nil
}

// chainColumns lists table i's columns (empty, in file order).
func chainColumns(p ChainParams, i int) []*table.Column {
	var cols []*table.Column
	if i > 1 {
		cols = append(cols, &table.Column{Name: fmt.Sprintf("k%d", i-1), Kind: table.Key})
	}
	if i < p.Tables {
		cols = append(cols, &table.Column{Name: fmt.Sprintf("k%d", i), Kind: table.Key})
	}
	for a := 1; a <= p.X; a++ {
		cols = append(cols, &table.Column{Name: fmt.Sprintf("a%d", a), Kind: table.Numeric})
	}
	for a := 1; a <= p.X; a++ {
		cols = append(cols, &table.Column{Name: fmt.Sprintf("c%d", a), Kind: table.Categorical})
	}
	if i == 1 {
		cols = append(cols, &table.Column{Name: "class", Kind: table.Class})
	}
	return cols
}

func genChainSet(p ChainParams, stream uint64) map[string]*table.Table {
	rng := rand.New(rand.NewPCG(p.Seed, stream))
	k, X := p.Tables, p.X
	m := min(p.N, 10000)
	lambda := float64(p.N) / float64(p.V)
	size := make([]int, p.V)
	share := make([][]int, p.V) // share[j][i] = h_ji
	yes := make([]bool, p.V)
	for j := range size {
		size[j] = poisson(rng, lambda)
	}
	for j := range share {
		h := rng.IntN(k*X + 1)
		yes[j] = 2*h >= k*X
		share[j] = make([]int, k)
		for u := 0; u < h; u++ {
			// a uniformly chosen table with room: at most X per table
			var room []int
			for i, s := range share[j] {
				if s < X {
					room = append(room, i)
				}
			}
			share[j][room[rng.IntN(len(room))]]++
		}
	}
	out := map[string]*table.Table{}
	perm := make([]int, X)
	for i := 1; i <= k; i++ {
		cols := chainColumns(p, i)
		t := &table.Table{Name: fmt.Sprintf("T%d", i), Columns: cols}
		for j := range size {
			jv := strconv.Itoa(j + 1)
			for r := 0; r < size[j]; r++ {
				c := 0
				if i > 1 {
					cols[c].Str = append(cols[c].Str, jv)
					c++
				}
				if i < k {
					cols[c].Str = append(cols[c].Str, jv)
					c++
				}
				for a := range perm {
					perm[a] = a
				}
				rng.Shuffle(X, func(a, b int) { perm[a], perm[b] = perm[b], perm[a] })
				top := make([]bool, X)
				for _, a := range perm[:share[j][i-1]] {
					top[a] = true
				}
				for a := 0; a < X; a++ {
					v := 1 + rng.IntN(m/2)
					if top[a] {
						v = m/2 + 1 + rng.IntN(m-m/2)
					}
					cols[c].Num = append(cols[c].Num, float64(v))
					cols[c].Str = append(cols[c].Str, strconv.Itoa(v))
					c++
				}
				for a := 0; a < X; a++ {
					cols[c].Str = append(cols[c].Str, strconv.Itoa(1+rng.IntN(20)))
					c++
				}
				if i == 1 {
					cls := "No"
					if yes[j] {
						cls = "Yes"
					}
					cols[c].Str = append(cols[c].Str, cls)
				}
			}
		}
		for _, c := range cols {
			if c.Kind == table.Numeric && c.Num == nil {
				c.Num = []float64{}
			}
		}
		out[t.Name] = t
	}
	return out
}

// poisson draws from Poisson(lambda) exactly: Knuth's product of uniforms,
// on parts of at most 30 (a sum of independent Poissons is Poisson), so
// that exp(-part) never underflows.
func poisson(rng *rand.Rand, lambda float64) int {
	n := 0
	for lambda > 0 {
		part := min(lambda, 30)
		lambda -= part
		limit := math.Exp(-part)
		prod := rng.Float64()
		for prod > limit {
			n++
			prod *= rng.Float64()
		}
	}
	return n
}

// WriteCSV writes a table as CSV with a header row, values as loaded.
func WriteCSV(w io.Writer, t *table.Table) error {
	cw := csv.NewWriter(w)
	rec := make([]string, len(t.Columns))
	for i, c := range t.Columns {
		rec[i] = c.Name
	}
	if err := cw.Write(rec); err != nil {
		return fmt.Errorf("sjc: write table %q: %w", t.Name, err)
	}
	for r := 0; r < t.NumRows(); r++ {
		for i, c := range t.Columns {
			rec[i] = c.Str[r]
		}
		if err := cw.Write(rec); err != nil {
			return fmt.Errorf("sjc: write table %q: %w", t.Name, err)
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("sjc: write table %q: %w", t.Name, err)
	}
	return nil
}
