package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/table"
)

// dataCmd is the `data` group: preparing tables for jobs. Each subcommand
// is its own constructor; add new ones (say, generators) to the list.
func (a *app) dataCmd() *cobra.Command {
	cmd := groupCmd("data", "Prepare tables: generate the papers' data, move tables between CSV, Parquet, SQLite and PostgreSQL")
	cmd.Long = `data moves tables between the source types a node reads. A SOURCE is written as

  PATH.csv | PATH.parquet          a file (Parquet by the .parquet extension)
  sqlite:PATH#TABLE                a table in an SQLite database file
  postgres-env:VAR#TABLE           a PostgreSQL table; $VAR holds the connection string
  postgres-file:PATH#TABLE         the same, with the connection string in a 0600 file

Writing never replaces an existing file or table, and a failed write leaves none.`
	cmd.AddCommand(a.dataImportCmd(), a.dataExportCmd(), a.dataGenCmd(), a.dataQIDTestCmd())
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
