package main

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/table"
)

// qidFlags are the quasi-identifiers of a local table and their
// taxonomies, as the data commands over the generalisation lattice take
// them.
type qidFlags struct {
	taxonomy map[string]string
	qid      string
}

func (f *qidFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringToStringVar(&f.taxonomy, "taxonomy", nil, "a quasi-identifier's taxonomy, col=PATH (ARX hierarchy CSV or YAML, as a spec's taxonomies); repeat per column")
	cmd.Flags().StringVar(&f.qid, "qid", "", "the quasi-identifiers in lattice order, comma-separated (default: every --taxonomy column, sorted)")
}

// load reads the table and encodes its quasi-identifiers. A value its
// taxonomy does not cover is counted and the column named, never the value.
func (f *qidFlags) load(cmd *cobra.Command, arg string) (*table.Table, *anonymize.Dataset, error) {
	if len(f.taxonomy) == 0 {
		return nil, nil, fmt.Errorf("--taxonomy: give at least one col=PATH")
	}
	qid := strings.Split(f.qid, ",")
	for i := range qid {
		qid[i] = strings.TrimSpace(qid[i])
	}
	if f.qid == "" {
		qid = qid[:0]
		for c := range f.taxonomy {
			qid = append(qid, c)
		}
		slices.Sort(qid)
	}
	t, err := openSourceArg(cmd.Context(), arg)
	if err != nil {
		return nil, nil, err
	}
	tax := map[string]*anonymize.Taxonomy{}
	for _, q := range qid {
		path, ok := f.taxonomy[q]
		if !ok {
			return nil, nil, fmt.Errorf("--qid: column %q has no --taxonomy", q)
		}
		if tax[q], err = anonymize.LoadTaxonomy(path, q); err != nil {
			return nil, nil, fmt.Errorf("--taxonomy %s: %w", q, err)
		}
		c, err := t.Column(q)
		if err != nil {
			return nil, nil, fmt.Errorf("--qid: table %s has no column %q", t.Name, q)
		}
		bad := 0
		for _, v := range c.Str {
			if _, err := tax[q].Leaf(v); err != nil {
				bad++
			}
		}
		if bad > 0 {
			return nil, nil, fmt.Errorf("%w: --taxonomy %s: %d of %d rows hold a value it does not cover", anonymize.ErrNotCovered, q, bad, t.NumRows())
		}
	}
	ds, err := anonymize.Encode(t, qid, tax)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: table %s", anonymize.ErrNotCovered, t.Name)
	}
	return t, ds, nil
}

// perColumn parses col=number flags into one value per attribute of ds
// (missing: def); the flag is named on a bad entry.
func perColumn(flag string, m map[string]string, ds *anonymize.Dataset, def float64) ([]float64, error) {
	out := make([]float64, len(ds.Attrs))
	for i := range out {
		out[i] = def
	}
	for c, v := range m {
		i := ds.Index(c)
		if i < 0 {
			return nil, fmt.Errorf("--%s: column %q is not a quasi-identifier", flag, c)
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || x < 0 {
			return nil, fmt.Errorf("--%s: column %q needs a number of at least 0", flag, c)
		}
		out[i] = x
	}
	return out, nil
}

// latticeReport is what `cohort data lattice` prints.
type latticeReport struct {
	Rows       int                     `json:"rows"`
	QID        []string                `json:"qid"`
	Steps      []int                   `json:"steps"`
	Lattice    int                     `json:"lattice"`
	Strategies string                  `json:"strategies"`
	K          int                     `json:"k"`
	Model      string                  `json:"model,omitempty"`
	Minimal    []anonymize.NodeFigures `json:"minimal,omitempty"`
	MinimalSec float64                 `json:"minimal_seconds,omitempty"`
	Samarati   *samaratiReport         `json:"samarati,omitempty"`
	Strategy   *strategyReport         `json:"strategy,omitempty"`
}

type samaratiReport struct {
	Node      anonymize.NodeFigures `json:"node"`
	Solutions [][]int               `json:"solutions"`
	Probes    []int                 `json:"probes"`
	Checked   int                   `json:"checked"`
	Seconds   float64               `json:"seconds"`
}

type strategyReport struct {
	Path  []string               `json:"path"`
	Stop  int                    `json:"stop"` // steps along the path; -1: none satisfies
	Node  *anonymize.NodeFigures `json:"node,omitempty"`
	Total int                    `json:"steps"`
}

// dataLatticeCmd is `cohort data lattice TABLE`: the full-domain
// generalisation lattice of a local table (Sun's thesis ch. 2).
func (a *app) dataLatticeCmd() *cobra.Command {
	var f qidFlags
	var k int
	var search, sensitive, strategy string
	var l float64
	var entropy bool
	var prio map[string]string
	cmd := &cobra.Command{
		Use:   "lattice TABLE --taxonomy COL=PATH... --k K",
		Short: "Search a table's generalisation lattice: the minimal nodes (privacy hash table), Samarati's binary search, a strategy's stopping level",
		Long: `lattice reads a local table and the taxonomies of its quasi-identifiers and searches
the full-domain generalisation lattice (one level per column) for the vectors that
make the table k-anonymous, and with --sensitive l-diverse (Sun's thesis ch. 2).
Nothing leaves the machine: it is for an organisation choosing what to publish.

  --search minimal   every minimal vector (Sun's Def. 2.5: no satisfying vector lies
                     below it), found with the privacy hash table, with its NCP,
                     classes, smallest class, discernibility and weighted discernibility
  --search samarati  Samarati's binary search on height: the lowest height with a
                     satisfying vector, the heights probed, the vectors counted, and the
                     least-NCP vector of that height
  --search all       both (the default)

It also prints the lattice's size and its number of generalisation strategies
(Sun's Theorem 2.1: (Σ steps)!/Π steps!). --strategy COL,COL,... is one strategy (the
column raised at each step, from the bottom); lattice prints where Sun's
Algorithms 1–4 stop along it. Weighted discernibility is Σ_G |G|²·Deg(G), Deg
the priority-weighted degree of anonymisation (Sun Defs. 4.4–4.5; --priority).`,
		Example: `  cohort data lattice adult.csv --k 5 --taxonomy age=arx/adult_hierarchy_age.csv --taxonomy sex=arx/adult_hierarchy_sex.csv
  cohort data lattice t.csv --k 2 --taxonomy gender=g.yaml --taxonomy zip=z.yaml --qid gender,zip --strategy zip,gender,zip`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if search != "all" && search != "minimal" && search != "samarati" {
				return fmt.Errorf("--search must be all, minimal or samarati")
			}
			if k < 1 {
				return fmt.Errorf("--k must be at least 1")
			}
			t, ds, err := f.load(cmd, args[0])
			if err != nil {
				return err
			}
			if k > ds.N {
				return fmt.Errorf("--k is larger than table %s's %d rows", t.Name, ds.N)
			}
			w, err := perColumn("priority", prio, ds, 1)
			if err != nil {
				return err
			}
			sens, model, err := sensitiveFlags(t, sensitive, l, entropy)
			if err != nil {
				return err
			}
			rep, err := latticeRun(ds, k, sens, w, search, strategy)
			if err != nil {
				return err
			}
			rep.Model = model
			return a.printLattice(rep)
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&k, "k", 0, "the k of k-anonymity (required)")
	cmd.Flags().StringVar(&search, "search", "all", "all, minimal or samarati")
	cmd.Flags().StringVar(&sensitive, "sensitive", "", "a sensitive column every class must hold l-diverse (with --l)")
	cmd.Flags().Float64Var(&l, "l", 0, "distinct l-diversity of --sensitive (entropy l-diversity with --entropy)")
	cmd.Flags().BoolVar(&entropy, "entropy", false, "--l is entropy l-diversity")
	cmd.Flags().StringVar(&strategy, "strategy", "", "one generalisation strategy: the column raised at each step, comma-separated")
	cmd.Flags().StringToStringVar(&prio, "priority", nil, "a column's priority for weighted discernibility, col=p (default 1 each)")
	return cmd
}

// sensitiveFlags codes the sensitive column under distinct or entropy l.
func sensitiveFlags(t *table.Table, col string, l float64, entropy bool) (*anonymize.Coded, string, error) {
	switch {
	case col == "" && (l != 0 || entropy):
		return nil, "", fmt.Errorf("--l needs --sensitive")
	case col == "":
		return nil, "", nil
	case l < 2:
		return nil, "", fmt.Errorf("--l must be at least 2 with --sensitive")
	}
	m := anonymize.SensitiveModel{L: int(l)}
	if entropy {
		m = anonymize.SensitiveModel{EntropyL: l}
	}
	c, err := t.Column(col)
	if err != nil {
		return nil, "", fmt.Errorf("--sensitive: table %s has no column %q", t.Name, col)
	}
	coded, err := m.Code(c.Str)
	if err != nil {
		return nil, "", fmt.Errorf("--sensitive: %w", err)
	}
	return coded, m.String(), nil
}

// latticeRun runs the searches asked for.
func latticeRun(ds *anonymize.Dataset, k int, sens *anonymize.Coded, prio []float64, search, strategy string) (*latticeReport, error) {
	rep := &latticeReport{Rows: ds.N, K: k, Lattice: 1}
	for _, at := range ds.Attrs {
		rep.QID = append(rep.QID, at.Name)
		rep.Steps = append(rep.Steps, at.Tax.MaxLevel())
		rep.Lattice *= at.Tax.MaxLevel() + 1
	}
	n, err := anonymize.StrategyCount(rep.Steps)
	if err != nil {
		return nil, err
	}
	rep.Strategies = n.String()
	if search != "samarati" {
		start := time.Now()
		if rep.Minimal, err = anonymize.MinimalNodes(ds, k, sens, prio); err != nil {
			return nil, err
		}
		rep.MinimalSec = time.Since(start).Seconds()
	}
	if search != "minimal" {
		start := time.Now()
		res, err := anonymize.Samarati(ds, []anonymize.Requirement{{QID: rep.QID, K: k}}, sens)
		if err != nil {
			return nil, err
		}
		sec := time.Since(start).Seconds()
		node, err := ds.Figures(res.Levels, prio)
		if err != nil {
			return nil, err
		}
		rep.Samarati = &samaratiReport{Node: node, Solutions: res.Solutions, Probes: res.Probes, Checked: res.Checked, Seconds: sec}
	}
	if strategy != "" {
		if rep.Strategy, err = strategyRun(ds, k, sens, prio, strategy); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// strategyRun builds the strategy's path of vectors and finds where Sun's
// Algorithms 1–4 stop along it.
func strategyRun(ds *anonymize.Dataset, k int, sens *anonymize.Coded, prio []float64, strategy string) (*strategyReport, error) {
	rep := &strategyReport{Path: strings.Split(strategy, ",")}
	v := make([]int, len(ds.Attrs))
	path := [][]int{slices.Clone(v)}
	for i, c := range rep.Path {
		a := ds.Index(strings.TrimSpace(c))
		if a < 0 {
			return nil, fmt.Errorf("--strategy: step %d names no quasi-identifier", i+1)
		}
		if v[a]++; v[a] > ds.Attrs[a].Tax.MaxLevel() {
			return nil, fmt.Errorf("--strategy: step %d raises column %q above its taxonomy's root", i+1, ds.Attrs[a].Name)
		}
		path = append(path, slices.Clone(v))
	}
	rep.Total = len(rep.Path)
	rep.Stop = anonymize.StrategyLevel(ds, path, k, sens)
	if rep.Stop >= 0 {
		f, err := ds.Figures(path[rep.Stop], prio)
		if err != nil {
			return nil, err
		}
		rep.Node = &f
	}
	return rep, nil
}

func (a *app) printLattice(rep *latticeReport) error {
	if a.format == "json" {
		return a.printJSON(rep)
	}
	fmt.Fprintf(a.stdout, "%d rows; quasi-identifiers %s (steps %v); lattice of %d vectors; %s generalisation strategies\n",
		rep.Rows, strings.Join(rep.QID, ","), rep.Steps, rep.Lattice, rep.Strategies)
	model := fmt.Sprintf("k = %d", rep.K)
	if rep.Model != "" {
		model += ", " + rep.Model
	}
	w := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
	row := func(label string, n anonymize.NodeFigures) {
		fmt.Fprintf(w, "%s\t%v\t%d\t%.4f\t%d\t%d\t%.0f\t%.0f\n", label, n.Levels, n.Height, n.NCP, n.Classes, n.MinGroup, n.DM, n.WDM)
	}
	header := "\tlevels\theight\tncp\tclasses\tmin class\tDM\tweighted DM"
	if rep.Minimal != nil || rep.Samarati == nil {
		fmt.Fprintf(a.stdout, "minimal vectors for %s (privacy hash table): %d, in %.3f s\n", model, len(rep.Minimal), rep.MinimalSec)
		fmt.Fprintln(w, header)
		for i, n := range rep.Minimal {
			row(fmt.Sprint(i+1), n)
		}
		w.Flush()
	}
	if s := rep.Samarati; s != nil {
		fmt.Fprintf(a.stdout, "Samarati's binary search for %s: height %d (heights probed %v), %d vectors counted, %d satisfying at that height, in %.3f s\n",
			model, s.Node.Height, s.Probes, s.Checked, len(s.Solutions), s.Seconds)
		fmt.Fprintln(w, header)
		row("least ncp", s.Node)
		w.Flush()
	}
	if s := rep.Strategy; s != nil {
		if s.Node == nil {
			fmt.Fprintf(a.stdout, "strategy %s: no vector along it satisfies %s\n", strings.Join(s.Path, ","), model)
			return nil
		}
		fmt.Fprintf(a.stdout, "strategy %s: stops at step %d of %d\n", strings.Join(s.Path, ","), s.Stop, s.Total)
		fmt.Fprintln(w, header)
		row("stop", *s.Node)
		w.Flush()
	}
	return nil
}
