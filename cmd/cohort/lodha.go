package main

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/table"
)

// dataProbAnonCmd is `cohort data prob-anon TABLE`: Lodha and Thomas's
// probabilistic (1−β, k)-anonymity planned for a local table.
func (a *app) dataProbAnonCmd() *cobra.Command {
	var f qidFlags
	var k int
	var beta, universe float64
	var weights map[string]string
	cmd := &cobra.Command{
		Use:   "prob-anon TABLE --taxonomy COL=PATH... --k K --beta B",
		Short: "Plan probabilistic (1−β, k)-anonymity for a table against a universe (Lodha and Thomas)",
		Long: `prob-anon plans Lodha and Thomas's probabilistic (1−β, k)-anonymity ("Probabilistic
Anonymity", PinKDD 2007, §3): every row should match at least k rows of a universe of
--universe rows (default: the table's own rows, the targeted adversary) with
probability at least 1−β. Theorem 4 bounds the value combinations a generalisation
may leave (D′); §3.1 splits D′ among the columns by --weight (Eq. 1; a column whose
share reaches its own distinct count is kept as it is); each column goes to the
lowest level of its taxonomy with at most its share of distinct values (§4.2).
It prints the plan, the NCP of the generalisation, its classes, the smallest, and
the share of rows in classes of at least k on the table itself. The guarantee is
against the universe: the table's own smallest class may be below k (use
--search in 'cohort data lattice' or kind anonymize for plain k-anonymity).`,
		Example: `  cohort data prob-anon adult.csv --k 5 --beta 0.1 --taxonomy age=arx/adult_hierarchy_age.csv --taxonomy sex=arx/adult_hierarchy_sex.csv
  cohort data prob-anon people.csv --k 100 --beta 0.1 --universe 300000000 --taxonomy zip=zip.yaml --taxonomy dob=dob.yaml`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case k < 2:
				return fmt.Errorf("--k must be at least 2")
			case !(beta > 0 && beta < 1):
				return fmt.Errorf("--beta must be in (0, 1)")
			case universe < 0 || math.IsNaN(universe):
				return fmt.Errorf("--universe must be at least 0")
			}
			_, ds, err := f.load(cmd, args[0])
			if err != nil {
				return err
			}
			if universe > 0 && universe < float64(k) {
				return fmt.Errorf("--universe must hold at least --k rows")
			}
			if universe == 0 && k > ds.N {
				return fmt.Errorf("--k is larger than the table's %d rows", ds.N)
			}
			w, err := perColumn("weight", weights, ds, 1)
			if err != nil {
				return err
			}
			if slices.Contains(w, 0) {
				return fmt.Errorf("--weight: every weight must be positive")
			}
			start := time.Now()
			res, err := anonymize.ProbabilisticAnonymise(ds, k, beta, universe, w)
			if err != nil {
				return err
			}
			return a.printProbAnon(ds, res, k, beta, universe, time.Since(start).Seconds())
		},
	}
	f.add(cmd)
	cmd.Flags().IntVar(&k, "k", 0, "the k of (1−β, k)-anonymity (required)")
	cmd.Flags().Float64Var(&beta, "beta", 0, "β: the probability a row may match fewer than k rows (required)")
	cmd.Flags().Float64Var(&universe, "universe", 0, "rows of the universe the adversary joins with (default: the table's rows)")
	cmd.Flags().StringToStringVar(&weights, "weight", nil, "a column's weight in the allocation, col=w (default 1 each; a larger weight keeps more values)")
	return cmd
}

func (a *app) printProbAnon(ds *anonymize.Dataset, res *anonymize.ProbabilisticResult, k int, beta, universe, sec float64) error {
	if universe == 0 {
		universe = float64(ds.N)
	}
	type column struct {
		Name     string  `json:"column"`
		Allowed  float64 `json:"allowed"`
		Level    int     `json:"level"`
		Distinct int     `json:"distinct"`
	}
	var cols []column
	for i, at := range ds.Attrs {
		cols = append(cols, column{at.Name, res.Allowed[i], res.Levels[i], res.Distinct[i]})
	}
	if a.format == "json" {
		return a.printJSON(map[string]any{"rows": ds.N, "universe": universe, "k": k, "beta": beta, "d_prime": res.DPrime,
			"columns": cols, "levels": res.Levels, "combinations": res.Combos, "ncp": res.NCP, "classes": res.Classes,
			"min_group": res.MinGroup, "covered": res.Covered, "seconds": sec})
	}
	fmt.Fprintf(a.stdout, "%d rows, universe %g, (1−β, k) = (%g, %d): at most D′ = %.4g value combinations (Theorem 4)\n", ds.N, universe, 1-beta, k, res.DPrime)
	w := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
	fmt.Fprintln(w, "column\tallowed d′\tlevel\tdistinct at level")
	for _, c := range cols {
		fmt.Fprintf(w, "%s\t%.4g\t%d\t%d\n", c.Name, c.Allowed, c.Level, c.Distinct)
	}
	w.Flush()
	fmt.Fprintf(a.stdout, "levels %v: %d combinations in the table, ncp %.4f, %d classes, smallest %d, %.2f%% of rows in classes of at least %d; %.3f s\n",
		res.Levels, res.Combos, res.NCP, res.Classes, res.MinGroup, 100*res.Covered, k, sec)
	return nil
}

// dataOneDimCmd is `cohort data onedim TABLE`: Lodha and Thomas's optimal
// one-dimensional k-anonymity of one numeric column.
func (a *app) dataOneDimCmd() *cobra.Command {
	var column, method string
	var k int
	var show bool
	cmd := &cobra.Command{
		Use:   "onedim TABLE --column COL --k K",
		Short: "k-anonymise one numeric column optimally (Lodha and Thomas §4.1): dynamic programme or quantiles",
		Long: `onedim cuts the values of one numeric column, sorted, into contiguous clusters of at
least k and maps each value to its cluster's median (Lodha and Thomas, "Probabilistic
Anonymity", §4.1). --method dp is their dynamic programme: clusters of k to 2k−1
values of least total |x − median| (the k-median cost), in O(n(k + log n)); --method
quantile is the quantile transformation (Def. 9), which has the least rank
difference (Theorem 5). It prints the clusters' count and sizes, the k-median cost,
the rank difference (Def. 8), the squared error against that of one cluster (their
Error/MinError, which falls as 1/b² with b clusters), and the time; --clusters lists
each cluster's range, size and median (they are the table's values: keep them local).`,
		Example: `  cohort data onedim adult.csv --column age --k 10
  cohort data onedim adult.csv --column age --k 10 --method quantile`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case column == "":
				return fmt.Errorf("--column is required")
			case k < 1:
				return fmt.Errorf("--k must be at least 1")
			case method != "dp" && method != "quantile":
				return fmt.Errorf("--method must be dp or quantile")
			}
			t, err := openSourceArg(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			xs, err := numericColumn(t, column)
			if err != nil {
				return err
			}
			if k > len(xs) {
				return fmt.Errorf("--k is larger than table %s's %d rows", t.Name, len(xs))
			}
			return a.oneDim(xs, k, method, show)
		},
	}
	cmd.Flags().StringVar(&column, "column", "", "the numeric column (required)")
	cmd.Flags().IntVar(&k, "k", 0, "the least cluster size (required)")
	cmd.Flags().StringVar(&method, "method", "dp", "dp (least k-median cost) or quantile (least rank difference)")
	cmd.Flags().BoolVar(&show, "clusters", false, "list every cluster's range, size and median")
	return cmd
}

// numericColumn parses a column's values; a value that is not a number is
// counted, the column named, never the value.
func numericColumn(t *table.Table, name string) ([]float64, error) {
	c, err := t.Column(name)
	if err != nil {
		return nil, fmt.Errorf("--column: table %s has no column %q", t.Name, name)
	}
	xs := make([]float64, len(c.Str))
	bad := 0
	for i, s := range c.Str {
		x, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			bad++
		}
		xs[i] = x
	}
	if bad > 0 {
		return nil, fmt.Errorf("--column %q: %d of %d rows hold no finite number", name, bad, len(xs))
	}
	return xs, nil
}

// oneDim runs the method and prints its figures.
func (a *app) oneDim(xs []float64, k int, method string, show bool) error {
	start := time.Now()
	var clusters [][]int
	var err error
	if method == "dp" {
		clusters, _, err = anonymize.OneDimK(xs, k)
	} else {
		clusters, _, err = anonymize.QuantileTransform(xs, k)
	}
	if err != nil {
		return err
	}
	sec := time.Since(start).Seconds()
	mapped := make([]float64, len(xs))
	type cluster struct {
		Lo     float64 `json:"lo"`
		Hi     float64 `json:"hi"`
		Size   int     `json:"size"`
		Median float64 `json:"median"`
	}
	var cl []cluster
	minSize, maxSize := len(xs), 0
	for _, c := range clusters {
		vals := make([]float64, len(c))
		for i, j := range c {
			vals[i] = xs[j]
		}
		slices.Sort(vals)
		med := vals[(len(vals)-1)/2]
		for _, j := range c {
			mapped[j] = med
		}
		cl = append(cl, cluster{vals[0], vals[len(vals)-1], len(c), med})
		minSize, maxSize = min(minSize, len(c)), max(maxSize, len(c))
	}
	cost, sq, mean := 0.0, 0.0, 0.0
	for _, x := range xs {
		mean += x / float64(len(xs))
	}
	minErr := 0.0
	for i, x := range xs {
		cost += math.Abs(x - mapped[i])
		sq += (x - mapped[i]) * (x - mapped[i])
		minErr += (x - mean) * (x - mean)
	}
	rd, err := anonymize.RankDifference(xs, clusters)
	if err != nil {
		return err
	}
	ratio := 0.0
	if minErr > 0 {
		ratio = sq / minErr
	}
	if a.format == "json" {
		out := map[string]any{"rows": len(xs), "k": k, "method": method, "clusters": len(clusters), "min_size": minSize, "max_size": maxSize,
			"kmedian_cost": cost, "rank_difference": rd, "error_ratio": ratio, "seconds": sec}
		if show {
			out["cluster_list"] = cl
		}
		return a.printJSON(out)
	}
	fmt.Fprintf(a.stdout, "%d rows, k = %d, %s: %d clusters of %d to %d rows; k-median cost %.6g (%.4g per row); rank difference %d; Error/MinError %.4g; %.3f s\n",
		len(xs), k, method, len(clusters), minSize, maxSize, cost, cost/float64(len(xs)), rd, ratio, sec)
	if show {
		w := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
		fmt.Fprintln(w, "lo\thi\tsize\tmedian")
		for _, c := range cl {
			fmt.Fprintf(w, "%g\t%g\t%d\t%g\n", c.Lo, c.Hi, c.Size, c.Median)
		}
		w.Flush()
	}
	return nil
}
