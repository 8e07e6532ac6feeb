package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/tree"
)

// dataCmd is the `data` group: preparing tables for jobs. Each subcommand
// is its own constructor; add new ones (say, generators) to the list.
func (a *app) dataCmd() *cobra.Command {
	cmd := groupCmd("data", "Prepare tables: generate the papers' data, move tables between CSV, Parquet, SQLite and PostgreSQL, recode them for outside miners")
	cmd.Long = `data moves tables between the source types a node reads. A SOURCE is written as

  PATH.csv | PATH.parquet          a file (Parquet by the .parquet extension)
  sqlite:PATH#TABLE                a table in an SQLite database file
  postgres-env:VAR#TABLE           a PostgreSQL table; $VAR holds the connection string
  postgres-file:PATH#TABLE         the same, with the connection string in a 0600 file

Writing never replaces an existing file or table, and a failed write leaves none.`
	cmd.AddCommand(a.dataImportCmd(), a.dataExportCmd(), a.dataGenCmd(), a.dataQIDTestCmd(), a.dataTransformCmd(), a.dataDecodeTreeCmd(), a.dataLatticeCmd(), a.dataProbAnonCmd(), a.dataOneDimCmd(), a.dataRatingCmd(), a.dataAttackCmd())
	return cmd
}

// dataFlags are the options every copy takes.
type dataFlags struct {
	schema string
	query  string
}

func (f *dataFlags) add(cmd *cobra.Command, query bool) {
	cmd.Flags().StringVar(&f.schema, "schema", "", "columns to copy and their kinds, as col=kind,col=kind (default: every column, kinds inferred)")
	if query {
		cmd.Flags().StringVar(&f.query, "query", "", "read the result of this read-only SELECT instead of #TABLE (databases only)")
	}
}

func (a *app) dataImportCmd() *cobra.Command {
	var f dataFlags
	cmd := &cobra.Command{
		Use:   "import FILE DEST",
		Short: "Copy a CSV or Parquet file into a Parquet file, an SQLite database or PostgreSQL",
		Example: `  cohort data import examples/sum/data/north.csv sqlite:north.db#admissions
  COHORT_PG='host=/run/postgresql dbname=h' cohort data import north.csv postgres-env:COHORT_PG#admissions`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, err := parseSourceArg(args[0], "")
			if err != nil {
				return err
			}
			if from.Path == "" {
				return fmt.Errorf("import reads a CSV or Parquet file, not %s (use export to copy from a database)", args[0])
			}
			to, err := parseSourceArg(args[1], "")
			if err != nil {
				return err
			}
			return a.copyTable(cmd, from, to, f.schema)
		},
	}
	f.add(cmd, false)
	return cmd
}

func (a *app) dataExportCmd() *cobra.Command {
	var f dataFlags
	cmd := &cobra.Command{
		Use:   "export SOURCE FILE",
		Short: "Copy a table (or a query's result) from any source into a CSV or Parquet file",
		Example: `  cohort data export sqlite:north.db#admissions north.parquet
  cohort data export --query "SELECT ward, v FROM admissions WHERE v > 5" sqlite:north.db north.csv`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			from, err := parseSourceArg(args[0], f.query)
			if err != nil {
				return err
			}
			to, err := parseSourceArg(args[1], "")
			if err != nil {
				return err
			}
			if to.Path == "" {
				return fmt.Errorf("export writes a CSV or Parquet file, not %s (use import to fill a database)", args[1])
			}
			return a.copyTable(cmd, from, to, f.schema)
		},
	}
	f.add(cmd, true)
	return cmd
}

func (a *app) dataTransformCmd() *cobra.Command {
	var f dataFlags
	var class, out, dir string
	var opt transform.Options
	cmd := &cobra.Command{
		Use:   "transform TABLE --class COL --out DIR",
		Short: "Recode a table's numeric columns for an outside miner, keeping every decision tree (Bu et al.)",
		Long: `transform writes DIR/<table>.csv, the same rows in the same order with every numeric
column (but the class) recoded by a secret piecewise monotone function that keeps the
gini and entropy decision trees, and DIR/transform.key (mode 0600), the secret that
decode-tree needs. It prints each column's pieces and the inputs of the paper's safety
recipe (many monochromatic values or many discontinuities). docs/transform.md has the
details and what the recoded table still reveals.`,
		Example: `  cohort data transform --schema id=id,y=class,x0=numeric,x1=numeric data/guest.csv --class y --out /tmp/rec`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if class == "" || out == "" {
				return fmt.Errorf("--class and --out are required")
			}
			opt.Direction = transform.Direction(dir)
			src, err := parseSourceArg(args[0], "")
			if err != nil {
				return err
			}
			schema, err := parseSchemaFlag(f.schema)
			if err != nil {
				return err
			}
			t, err := table.Open(cmd.Context(), src, tableName(src), schema, table.ReadOptions{})
			if err != nil {
				return err
			}
			rec, key, err := transform.Transform(t, class, opt)
			if err != nil {
				return err
			}
			return a.writeTransform(cmd, out, rec, key)
		},
	}
	f.add(cmd, false)
	cmd.Flags().StringVar(&class, "class", "", "the class column (required)")
	cmd.Flags().StringVar(&out, "out", "", "directory for <table>.csv and transform.key (created if missing; files are never replaced)")
	cmd.Flags().StringVar(&dir, "direction", "monotone", "global invariant: monotone or anti-monotone")
	cmd.Flags().IntVar(&opt.Breakpoints, "breakpoints", 0, "breakpoints to aim for per column (0: 20)")
	cmd.Flags().IntVar(&opt.MinWidth, "min-width", 0, "smallest monochromatic piece, in distinct values")
	return cmd
}

// tableName is a source's table name: the file's base name without its
// extension, or the database table.
func tableName(src table.Source) string {
	if src.Path != "" {
		return strings.TrimSuffix(filepath.Base(src.Path), filepath.Ext(src.Path))
	}
	return src.Table
}

// openSourceArg opens a command's table argument (a SOURCE, see `cohort
// data`) whole, every column read as its values suggest.
func openSourceArg(ctx context.Context, arg string) (*table.Table, error) {
	src, err := parseSourceArg(arg, "")
	if err != nil {
		return nil, err
	}
	return table.Open(ctx, src, tableName(src), nil, table.ReadOptions{})
}

// writeTransform writes the key, then the recoded table (the key goes if
// the table cannot be written), and reports each recoded column.
func (a *app) writeTransform(cmd *cobra.Command, out string, rec *table.Table, key *transform.Key) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	keyPath, csvPath := filepath.Join(out, "transform.key"), filepath.Join(out, rec.Name+".csv")
	if _, err := os.Lstat(csvPath); err == nil {
		return fmt.Errorf("%w: %s", table.ErrExists, csvPath)
	}
	if err := transform.WriteKey(keyPath, key); err != nil {
		return err
	}
	if err := table.Write(cmd.Context(), table.Source{Path: csvPath}, rec); err != nil {
		os.Remove(keyPath)
		return err
	}
	var stats []transform.ColumnStats
	for _, c := range key.Columns {
		if c.Recoded() {
			stats = append(stats, c.Stats())
		}
	}
	if a.format == "json" {
		return a.printJSON(map[string]any{"table": csvPath, "key": keyPath, "rows": key.Rows, "columns": stats})
	}
	fmt.Fprintf(a.stdout, "recoded %d rows, %d numeric columns: %s; key %s (keep it secret)\n", key.Rows, len(stats), csvPath, keyPath)
	fmt.Fprintf(a.stdout, "%-20s %9s %7s %11s %12s %16s\n", "column", "distinct", "pieces", "mono pieces", "mono values", "discontinuities")
	for _, s := range stats {
		disc := "-"
		if s.Discontinuities >= 0 {
			disc = fmt.Sprint(s.Discontinuities)
		}
		fmt.Fprintf(a.stdout, "%-20s %9d %7d %11d %11.1f%% %16s\n", s.Column, s.Distinct, s.Pieces, s.MonoPieces, 100*s.MonoShare(), disc)
	}
	return nil
}

func (a *app) dataDecodeTreeCmd() *cobra.Command {
	var keyPath, tableArg string
	cmd := &cobra.Command{
		Use:   "decode-tree --key KEY TREE.json",
		Short: "Map a tree grown on a transformed table back to the original values",
		Long: `decode-tree reads a tree grown on a table that transform recoded, in Cohort's tree JSON
or the scikit-learn-style export of docs/transform.md, and prints it (stdout) in Cohort's
tree JSON with every threshold in the original domain. With the key alone each split sends every
training row where the miner's did; with --table (the original table) the thresholds are
exactly those of the tree grown on the original table, and the tree's counts are checked
against its rows.`,
		Example: `  cohort data decode-tree --key /tmp/rec/transform.key --table data/guest.csv tree.json`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyPath == "" {
				return fmt.Errorf("--key is required")
			}
			key, err := transform.ReadKey(keyPath)
			if err != nil {
				return err
			}
			mined, _, err := transform.ReadTree(args[0])
			if err != nil {
				return err
			}
			var dec *tree.Tree
			if tableArg == "" {
				dec, err = transform.DecodeTree(mined, key)
			} else {
				dec, err = a.decodeOnTable(cmd, tableArg, mined, key)
			}
			if err != nil {
				return err
			}
			b, err := dec.MarshalJSON()
			if err != nil {
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "%s\n", b)
			return err
		},
	}
	cmd.Flags().StringVar(&keyPath, "key", "", "the transform.key written by transform (required)")
	cmd.Flags().StringVar(&tableArg, "table", "", "the original table (SOURCE), for exact thresholds")
	return cmd
}

func (a *app) decodeOnTable(cmd *cobra.Command, arg string, mined *tree.Tree, key *transform.Key) (*tree.Tree, error) {
	src, err := parseSourceArg(arg, "")
	if err != nil {
		return nil, err
	}
	raw, err := table.Open(cmd.Context(), src, key.Table, key.Schema(), table.ReadOptions{})
	if err != nil {
		return nil, err
	}
	return transform.DecodeTreeWithTable(mined, key, raw)
}

// copyTable reads src whole (within the memory budget for a table) and
// writes it to a new file or table at to.
func (a *app) copyTable(cmd *cobra.Command, src, to table.Source, schemaFlag string) error {
	schema, err := parseSchemaFlag(schemaFlag)
	if err != nil {
		return err
	}
	t, err := table.Open(cmd.Context(), src, "data", schema, table.ReadOptions{})
	if err != nil {
		return err
	}
	if err := table.Write(cmd.Context(), to, t); err != nil {
		return err
	}
	if a.format == "json" {
		return a.printJSON(map[string]any{"from": src.String(), "to": to.String(), "rows": t.NumRows(), "columns": len(t.Columns)})
	}
	fmt.Fprintf(a.stdout, "copied %d rows, %d columns: %s -> %s\n", t.NumRows(), len(t.Columns), src, to)
	return nil
}

// parseSourceArg parses the SOURCE notation of `cohort data --help`; query,
// if set, replaces #TABLE.
func parseSourceArg(s, query string) (table.Source, error) {
	var src table.Source
	kind, rest, found := strings.Cut(s, ":")
	db := found && (kind == "sqlite" || kind == "postgres-env" || kind == "postgres-file")
	if !db {
		if query != "" {
			return src, fmt.Errorf("--query needs a database source, not the file %s", s)
		}
		src.Path = s
		return src, src.Validate()
	}
	where, tbl, _ := strings.Cut(rest, "#")
	switch kind {
	case "sqlite":
		src.SQLite = where
	case "postgres-env":
		src.PostgresEnv = where
	default:
		src.PostgresFile = where
	}
	if query != "" {
		if tbl != "" {
			return src, fmt.Errorf("%s: give #TABLE or --query, not both", s)
		}
		src.Query = query
	} else {
		src.Table = tbl
	}
	if where == "" {
		return src, fmt.Errorf("%s: missing the database after %s:", s, kind)
	}
	if err := src.Validate(); err != nil {
		return src, fmt.Errorf("%s: %w", s, err)
	}
	return src, nil
}

// parseSchemaFlag parses col=kind,col=kind.
func parseSchemaFlag(s string) (map[string]table.Kind, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	out := map[string]table.Kind{}
	for _, part := range strings.Split(s, ",") {
		col, k, ok := strings.Cut(part, "=")
		col = strings.TrimSpace(col)
		if !ok || col == "" {
			return nil, fmt.Errorf("--schema: %q is not col=kind", part)
		}
		kind, err := table.ParseKind(k)
		if err != nil {
			return nil, fmt.Errorf("--schema: column %s: %w", col, err)
		}
		out[col] = kind
	}
	return out, nil
}
