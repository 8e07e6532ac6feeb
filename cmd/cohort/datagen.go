package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/bicluster"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/internal/atomicfile"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/sjc"
	"github.com/cohortdm/cohort/table"
)

// dataGenCmd is `data gen`: the papers' synthetic data, split over parties
// as the jobs expect it, with a spec naming the parties and tables.
func (a *app) dataGenCmd() *cobra.Command {
	cmd := groupCmd("gen", "Generate the papers' synthetic data, split over parties, with a job spec")
	cmd.AddCommand(a.dataGenSJCCmd(), a.dataGenBiclusterCmd())
	return cmd
}

// genOut is where a generator writes: a new or empty directory.
func genOut(dir string) error {
	if dir == "" {
		return fmt.Errorf("--out DIR is required")
	}
	entries, err := os.ReadDir(dir)
	switch {
	case os.IsNotExist(err):
		return os.MkdirAll(dir, 0o755)
	case err != nil:
		return err
	case len(entries) > 0:
		return fmt.Errorf("--out %s is not empty: generators never overwrite files", dir)
	}
	return nil
}

// writeGenerated writes one file of a generator's output atomically.
func writeGenerated(dir, name string, write func(w io.Writer) error) error {
	var b strings.Builder
	bw := bufio.NewWriter(&b)
	if err := write(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return atomicfile.Write(filepath.Join(dir, name), []byte(b.String()), 0o644)
}

func (a *app) dataGenSJCCmd() *cobra.Command {
	var p sjc.ChainParams
	var out string
	cmd := &cobra.Command{
		Use:   "sjc --out DIR",
		Short: "The secure-join-classification thesis's synthetic chain join (§3.3): one party per table, train and test sets",
		Long: `sjc writes the chain T1 - T2 - ... - Tk of the thesis's §3.3: about N records per
table, V join groups, X numeric and X categorical attributes per table, the class in
T1. It writes Ti.csv and Ti_test.csv for every table and spec.yaml (kind sjc, one
party pi per table, the join and the test tables), seeded, so a run repeats.`,
		Example: `  cohort data gen sjc --tables 3 --n 1000 --v 250 --x 5 --seed 1 --out /tmp/chain3`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := genOut(out); err != nil {
				return err
			}
			ch, err := sjc.GenChain(p)
			if err != nil {
				return err
			}
			var written []string
			for _, set := range []struct {
				tables map[string]*table.Table
				suffix string
			}{{ch.Train, ".csv"}, {ch.Test, "_test.csv"}} {
				for _, name := range sortedMapKeys(set.tables) {
					file := name + set.suffix
					if err := writeGenerated(out, file, func(w io.Writer) error { return sjc.WriteCSV(w, set.tables[name]) }); err != nil {
						return err
					}
					written = append(written, file)
				}
			}
			spec, err := ch.Spec.Marshal()
			if err != nil {
				return err
			}
			if err := atomicfile.Write(filepath.Join(out, "spec.yaml"), spec, 0o644); err != nil {
				return err
			}
			return a.printGenerated(out, append(written, "spec.yaml"))
		},
	}
	cmd.Flags().IntVar(&p.Tables, "tables", 3, "tables in the chain (k)")
	cmd.Flags().IntVar(&p.N, "n", 1000, "records per table, about (N)")
	cmd.Flags().IntVar(&p.V, "v", 250, "join groups per join attribute (V)")
	cmd.Flags().IntVar(&p.X, "x", 5, "numeric and categorical attributes per table, X of each")
	cmd.Flags().Uint64Var(&p.Seed, "seed", 1, "seed")
	cmd.Flags().StringVar(&out, "out", "", "new or empty directory to write into")
	return cmd
}

func (a *app) dataGenBiclusterCmd() *cobra.Command {
	var gen string
	var noise float64
	var parties int
	var seed uint64
	var out string
	cmd := &cobra.Command{
		Use:   "bicluster --out DIR",
		Short: "The Phoenix paper's biclustering data (or a shifted-constant set) split by rows over parties",
		Long: `bicluster writes a matrix with implanted biclusters, its rows dealt at random over the
parties, as one CSV per party (an id column and the numeric columns c0, c1, ...),
implanted.json (the implanted biclusters, by row id and column) and spec.yaml.

  --gen paper     100×100, ten 10×10 constant biclusters, a fraction --noise (γ, 0 to 0.25)
                  of the cells replaced by a random 0 or 1 (the paper's setting)
  --gen shifted   300×300, five shifted-constant biclusters with Gaussian noise of
                  standard deviation --noise (like scikit-learn's make_biclusters)`,
		Example: `  cohort data gen bicluster --gen paper --noise 0.1 --parties 4 --seed 7 --out /tmp/bc`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := genOut(out); err != nil {
				return err
			}
			seedBytes := []byte(strconv.FormatUint(seed, 10))
			var m *generated
			var err error
			switch gen {
			case "paper":
				m, err = generate(synth.Paper(noise).Generate(seedBytes))
			case "shifted":
				m, err = generate(synth.Sklearn(noise).Generate(seedBytes))
			default:
				return fmt.Errorf("--gen must be paper or shifted, not %q", gen)
			}
			if err != nil {
				return err
			}
			parts, err := synth.Split(m.matrix, parties, seedBytes)
			if err != nil {
				return err
			}
			spec := &job.Spec{Kind: "bicluster", Schema: map[string]map[string]string{"rows": {"id": "id"}}}
			for _, c := range m.matrix.ColNames {
				spec.Schema["rows"][c] = "numeric"
			}
			if len(m.matrix.ColNames) == 0 {
				for c := range m.matrix.Cols {
					spec.Schema["rows"]["c"+strconv.Itoa(c)] = "numeric"
				}
			}
			var written []string
			for i, part := range parts {
				name := fmt.Sprintf("org%d", i+1)
				file := name + ".csv"
				if err := writeGenerated(out, file, func(w io.Writer) error { return synth.WriteCSV(w, part.Matrix) }); err != nil {
					return err
				}
				spec.Parties = append(spec.Parties, job.PartySpec{Name: name, Tables: []job.TableSpec{{Name: "rows", Path: file}}})
				written = append(written, file)
			}
			implanted, err := json.MarshalIndent(m.implanted, "", "  ")
			if err != nil {
				return err
			}
			if err := atomicfile.Write(filepath.Join(out, "implanted.json"), append(implanted, '\n'), 0o644); err != nil {
				return err
			}
			b, err := spec.Marshal()
			if err != nil {
				return err
			}
			if err := atomicfile.Write(filepath.Join(out, "spec.yaml"), b, 0o644); err != nil {
				return err
			}
			return a.printGenerated(out, append(written, "implanted.json", "spec.yaml"))
		},
	}
	cmd.Flags().StringVar(&gen, "gen", "paper", "generator: paper or shifted")
	cmd.Flags().Float64Var(&noise, "noise", 0, "noise: γ for paper, σ for shifted")
	cmd.Flags().IntVar(&parties, "parties", 4, "parties to split the rows over")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed")
	cmd.Flags().StringVar(&out, "out", "", "new or empty directory to write into")
	return cmd
}

// generated is a generator's matrix and its implanted biclusters, the
// latter by row id and column name as implanted.json lists them.
type generated struct {
	matrix    *bicluster.Matrix
	implanted []implantedBicluster
}

type implantedBicluster struct {
	Rows    []string `json:"rows"`
	Columns []string `json:"columns"`
}

func generate(m *bicluster.Matrix, bcs []bicluster.Bicluster, err error) (*generated, error) {
	if err != nil {
		return nil, err
	}
	g := &generated{matrix: m}
	for _, bc := range bcs {
		var ib implantedBicluster
		for _, r := range bc.Rows {
			id := strconv.Itoa(r)
			if m.RowIDs != nil {
				id = m.RowIDs[r]
			}
			ib.Rows = append(ib.Rows, id)
		}
		for _, c := range bc.Cols {
			name := "c" + strconv.Itoa(c)
			if m.ColNames != nil {
				name = m.ColNames[c]
			}
			ib.Columns = append(ib.Columns, name)
		}
		g.implanted = append(g.implanted, ib)
	}
	return g, nil
}

func sortedMapKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// printGenerated says what a generator wrote.
func (a *app) printGenerated(dir string, files []string) error {
	if a.format == "json" {
		return a.printJSON(map[string]any{"dir": dir, "files": files})
	}
	fmt.Fprintf(a.stdout, "wrote %d files under %s: %s\n", len(files), dir, strings.Join(files, ", "))
	return nil
}
