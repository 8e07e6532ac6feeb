package main

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/transform/attack"
	"github.com/cohortdm/cohort/tree"
)

// attackFlags are the flags of `cohort data attack`.
type attackFlags struct {
	key, table, tree string
	subspaces        []string
	o                attack.Options
}

// dataAttackCmd is `cohort data attack --key KEY`: Bu et al.'s attacks on
// a recoded table, run by its owner before it leaves.
func (a *app) dataAttackCmd() *cobra.Command {
	var f attackFlags
	cmd := &cobra.Command{
		Use:   "attack --key DIR/transform.key [--table TABLE] [--tree TREE.json]",
		Short: "Run the disclosure attacks of Bu et al. on a recoded table before sending it out",
		Long: `attack plays the hacker of Bu, Lakshmanan, Ng and Ramesh ("Preservation of Patterns and
Input-Output Privacy", ICDE 2007, §3 and §6) against the key that 'cohort data transform'
wrote, so that the table's owner sees what the recoded table still reveals before it
leaves. For each recoded column it prints the domain disclosure (Definition 1: the share
of the column's distinct values a hacker guesses within ρ, here --rho of the column's
range width) of

  face value         an ignorant hacker, who takes recoded values as they are;
  constant guess     one guess, the median, for every value: a floor no recoding lowers;
  curve fitting      linear regression, natural spline and polyline through --good good
                     and --bad bad knowledge points (Definitions 4–5; the paper's expert
                     has 4 good ones), medians over --trials draws of the points;
  combination        the three fits together (§6.2.2): cracked by any, by two or more;
  sorting            the sorting attack in its worst case (§3, Figure 11: the hacker
                     knows the minimum and the direction and maps the i-th recoded value
                     to min + i), cracks exact and within ρ, and for integer columns the
                     mean crack probability of §5.4;

with the column's distinct values, discontinuities and share of monochromatic values,
the inputs of the paper's safety recipe (§5.4). With --table (the original table) it adds
the subspace association disclosure (Definition 2: the share of rows cracked in every
column of a subspace, each column by its stronger attack, polyline or sorting) of every
recoded column together and of each --subspace. With --tree (a tree mined on the recoded
table, in Cohort's tree JSON or the scikit-learn export) it adds the pattern disclosure
(Definition 3: the share of root-to-leaf paths whose every threshold the hacker's
polyline guesses within ρ; the tree is decoded with --table when given, else with the
key alone). The key is the one about to be used: the trials draw knowledge points, not
keys. Nothing is sent anywhere. docs/transform.md has figures on Adult.`,
		Example: `  cohort data transform adult.csv --class salary --out rec
  cohort data attack --key rec/transform.key --table adult.csv
  cohort data attack --key rec/transform.key --table adult.csv --good 2 --rho 0.05 --subspace age,hours-per-week --tree tree.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.key == "" {
				return fmt.Errorf("--key is required")
			}
			if f.o.Trials < 1 || f.o.Good < 0 || f.o.Bad < 0 || !(f.o.Rho > 0 && f.o.Rho < 1) {
				return fmt.Errorf("--trials must be at least 1, --good and --bad at least 0, --rho in (0, 1)")
			}
			key, err := transform.ReadKey(f.key)
			if err != nil {
				return err
			}
			var raw *table.Table
			if f.table != "" {
				src, err := parseSourceArg(f.table, "")
				if err != nil {
					return err
				}
				if raw, err = table.Open(cmd.Context(), src, key.Table, key.Schema(), table.ReadOptions{}); err != nil {
					return err
				}
			}
			rep, err := runAttack(key, raw, f)
			if err != nil {
				return err
			}
			if f.tree != "" {
				if rep.Pattern, err = attackPattern(key, raw, f); err != nil {
					return err
				}
			}
			return a.printAttack(rep, f.o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "the transform.key that transform wrote (required)")
	fl.StringVar(&f.table, "table", "", "the original table (SOURCE), for subspace disclosure and exact tree thresholds")
	fl.StringVar(&f.tree, "tree", "", "a tree mined on the recoded table, for pattern disclosure")
	fl.StringArrayVar(&f.subspaces, "subspace", nil, "a subspace of recoded columns, col,col,... (repeatable; needs --table)")
	fl.IntVar(&f.o.Good, "good", 4, "good knowledge points per column (within ρ of the truth)")
	fl.IntVar(&f.o.Bad, "bad", 0, "bad knowledge points per column (5ρ to 10ρ off)")
	fl.Float64Var(&f.o.Rho, "rho", 0.02, "crack radius, a share of each column's range width")
	fl.IntVar(&f.o.Trials, "trials", 100, "draws of knowledge points (medians over them)")
	fl.Uint64Var(&f.o.Seed, "seed", 1, "seed of the knowledge points")
	return cmd
}

// attackReport is what `cohort data attack` prints.
type attackReport struct {
	Table     string              `json:"table"`
	Rows      int                 `json:"rows"`
	Columns   []attack.ColumnRisk `json:"columns"`
	Subspaces []attackSubspace    `json:"subspaces,omitempty"`
	Pattern   *attackPatternRisk  `json:"pattern,omitempty"`
	Seconds   float64             `json:"seconds"`
}

type attackSubspace struct {
	Columns []string `json:"columns"`
	Sorting []string `json:"by_sorting"`
	Risk    float64  `json:"risk"`
}

type attackPatternRisk struct {
	Paths  int     `json:"paths"`
	Median float64 `json:"median"`
	Worst  float64 `json:"worst"`
}

// runAttack assesses every recoded column and the subspaces.
func runAttack(key *transform.Key, raw *table.Table, f attackFlags) (*attackReport, error) {
	start := time.Now()
	rep := &attackReport{Table: key.Table, Rows: key.Rows}
	var cols []*transform.ColumnKey
	var ranks [][]int32
	for _, c := range key.Columns {
		if !c.Recoded() {
			continue
		}
		var rank []int32
		if raw != nil {
			rc, err := raw.Column(c.Name)
			if err != nil {
				return nil, fmt.Errorf("--table: %w", err)
			}
			if rank, err = attack.ValueIndex(c, rc.Num); err != nil {
				return nil, fmt.Errorf("--table: %w", err)
			}
		}
		r, err := attack.AssessColumn(c, rank, f.o)
		if err != nil {
			return nil, err
		}
		cols, ranks = append(cols, c), append(ranks, rank)
		rep.Columns = append(rep.Columns, r)
	}
	if len(cols) == 0 {
		return nil, fmt.Errorf("--key: the key recodes no column")
	}
	if raw == nil {
		if len(f.subspaces) > 0 {
			return nil, fmt.Errorf("--subspace needs --table")
		}
		rep.Seconds = time.Since(start).Seconds()
		return rep, nil
	}
	var all []string
	for _, c := range cols {
		all = append(all, c.Name)
	}
	sets := [][]string{all}
	for _, s := range f.subspaces {
		sets = append(sets, strings.Split(s, ","))
	}
	for _, set := range sets {
		sub, err := attackSubspaceRisk(cols, ranks, rep.Columns, set, f.o)
		if err != nil {
			return nil, err
		}
		rep.Subspaces = append(rep.Subspaces, sub)
	}
	rep.Seconds = time.Since(start).Seconds()
	return rep, nil
}

// attackSubspaceRisk is one subspace's risk, each column by its stronger
// attack (polyline or worst-case sorting).
func attackSubspaceRisk(cols []*transform.ColumnKey, ranks [][]int32, risks []attack.ColumnRisk, set []string, o attack.Options) (attackSubspace, error) {
	sub := attackSubspace{Columns: set}
	var cs []*transform.ColumnKey
	var rk [][]int32
	var sorting []bool
	for _, name := range set {
		j := slices.IndexFunc(cols, func(c *transform.ColumnKey) bool { return c.Name == name })
		if j < 0 {
			return sub, fmt.Errorf("--subspace: %q is not a recoded column of the key", name)
		}
		bySort := risks[j].Sorting > risks[j].Polyline
		if bySort {
			sub.Sorting = append(sub.Sorting, name)
		}
		cs, rk, sorting = append(cs, cols[j]), append(rk, ranks[j]), append(sorting, bySort)
	}
	r, err := attack.Subspace(cs, rk, sorting, o)
	sub.Risk = r
	return sub, err
}

// attackPattern reads and decodes the tree and scores its paths.
func attackPattern(key *transform.Key, raw *table.Table, f attackFlags) (*attackPatternRisk, error) {
	mined, _, err := transform.ReadTree(f.tree)
	if err != nil {
		return nil, fmt.Errorf("--tree: %w", err)
	}
	var dec *tree.Tree
	if raw != nil {
		dec, err = transform.DecodeTreeWithTable(mined, key, raw)
	} else {
		dec, err = transform.DecodeTree(mined, key)
	}
	if err != nil {
		return nil, fmt.Errorf("--tree: %w", err)
	}
	med, worst, paths, err := attack.PatternRisk(mined, dec, key, f.o)
	if err != nil {
		return nil, fmt.Errorf("--tree: %w", err)
	}
	return &attackPatternRisk{Paths: paths, Median: med, Worst: worst}, nil
}

// printAttack prints the report.
func (a *app) printAttack(r *attackReport, o attack.Options) error {
	if a.format == "json" {
		return a.printJSON(r)
	}
	pct := func(x float64) string {
		if x < 0 {
			return "-"
		}
		return fmt.Sprintf("%.1f%%", 100*x)
	}
	fmt.Fprintf(a.stdout, "key of table %s (%d rows), %d recoded columns; hacker: %d good and %d bad knowledge points a column, ρ = %g of each range, %d trials (seed %d); %.2f s\n",
		r.Table, r.Rows, len(r.Columns), o.Good, o.Bad, o.Rho, o.Trials, o.Seed, r.Seconds)
	w := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(w, "column\tdistinct\tdiscont.\tmono\tρ\tface\tconstant\tlin. reg.\tspline\tpolyline\tany fit\t2+ fits\tsorting exact\tsorting ρ\tP(sorting)\tworst\t")
	for _, c := range r.Columns {
		disc := "-"
		if c.Stats.Discontinuities >= 0 {
			disc = fmt.Sprint(c.Stats.Discontinuities)
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\t%.4g\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", c.Stats.Column, c.Stats.Distinct, disc,
			pct(c.Stats.MonoShare()), c.Rho, pct(c.FaceValue), pct(c.Constant), pct(c.LinReg), pct(c.Spline), pct(c.Polyline),
			pct(c.Union), pct(c.TwoOrMore), pct(c.SortingExact), pct(c.Sorting), pct(c.SortingProb), pct(math.Min(c.Best(), 1)))
	}
	w.Flush()
	for _, s := range r.Subspaces {
		how := "polyline"
		if len(s.Sorting) > 0 {
			how += "; sorting on " + strings.Join(s.Sorting, ", ")
		}
		fmt.Fprintf(a.stdout, "subspace {%s}: %s of rows cracked in every column (%s; median)\n", strings.Join(s.Columns, ", "), pct(s.Risk), how)
	}
	if p := r.Pattern; p != nil {
		fmt.Fprintf(a.stdout, "pattern disclosure: %d paths, %s cracked (median), %s in the worst trial\n", p.Paths, pct(p.Median), pct(p.Worst))
	}
	return nil
}
