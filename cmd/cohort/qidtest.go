package main

import (
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/table"
)

// dataQIDTestCmd is `cohort data qid-test TABLE`: Lodha and Thomas's test of
// which columns can re-identify (anonymize.QITest), before anything is
// shared: every column alone, every pair, and the columns together.
func (a *app) dataQIDTestCmd() *cobra.Command {
	var columns string
	var universe, alpha float64
	cmd := &cobra.Command{
		Use:   "qid-test TABLE",
		Short: "Test which columns of a table can re-identify its rows (Lodha and Thomas's quasi-identifier test)",
		Long: `qid-test reports, for every column alone, every pair of columns and all of them
together: the rows the table itself shows unique on them (S, F1 = S/rows), the
number of value combinations D (the product of the columns' distinct counts),
and F2, the largest expected fraction of a universe of --universe rows that D
combinations can single out (D/(e·n) for D ≤ n, else exp(−n/D)). A set with
F1 or F2 of at least --alpha may re-identify (QI). The default universe is the
table's own rows (an adversary who knows the table's population); give the
population it is drawn from for an oblivious one.`,
		Example: `  cohort data qid-test people.csv --columns age,sex,zip --universe 300000000`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src, err := parseSourceArg(args[0], "")
			if err != nil {
				return err
			}
			// The counts are computed where the table lives: a
			// database groups its rows, a file is streamed.
			agg, err := table.NewAggregator(src, nil, table.ReadOptions{})
			if err != nil {
				return err
			}
			defer agg.Close()
			cols, err := agg.Columns(cmd.Context())
			if err != nil {
				return err
			}
			if columns != "" {
				cols = strings.Split(columns, ",")
			}
			var sets [][]string
			for i, c := range cols {
				sets = append(sets, []string{c})
				for _, d := range cols[i+1:] {
					sets = append(sets, []string{c, d})
				}
			}
			if len(cols) > 2 {
				sets = append(sets, slices.Clone(cols))
			}
			rows, n, reports, err := anonymize.QITests(cmd.Context(), agg, sets, universe, alpha)
			if err != nil {
				return err
			}
			if a.format == "json" {
				return a.printJSON(map[string]any{"rows": rows, "universe": n, "alpha": alpha, "sets": reports})
			}
			fmt.Fprintf(a.stdout, "%d rows, universe %g, alpha %g\n", rows, n, alpha)
			w := tabwriter.NewWriter(a.stdout, 2, 4, 2, ' ', 0)
			fmt.Fprintln(w, "columns\tS\tF1\tD\tF2\tk-anon\tQI")
			for _, r := range reports {
				qi := ""
				if r.QI {
					qi = "yes"
				}
				fmt.Fprintf(w, "%s\t%d\t%.3f\t%.3g\t%.3f\t%.3g\t%s\n", strings.Join(r.Columns, ","), r.Singletons, r.F1, r.D, r.F2, r.KAnon, qi)
			}
			return w.Flush()
		},
	}
	cmd.Flags().StringVar(&columns, "columns", "", "the columns to test, comma-separated (default: every column)")
	cmd.Flags().Float64Var(&universe, "universe", 0, "rows of the population the table is drawn from (default: the table's rows)")
	cmd.Flags().Float64Var(&alpha, "alpha", 0.2, "the fraction of unique rows at which a set counts as a quasi-identifier")
	return cmd
}
