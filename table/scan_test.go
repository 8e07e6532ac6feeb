package table

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestScan: every source type hands Scan the rows Open loads, in its
// order, with Open's texts and numbers, and fails where Open fails; an error from
// the callback stops the scan and comes back; a column the table lacks
// is ErrNoColumn before any row is handed over.
func TestScan(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("k,v,cls,secret\n")
	for i := range 50 {
		fmt.Fprintf(&b, "k%d, %d.50 ,c%d,s%d\n", i%7, i, i%2, i)
	}
	csvPath := filepath.Join(dir, "t.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	all, err := Load(csvPath, "t", nil)
	if err != nil {
		t.Fatal(err)
	}
	schema := map[string]Kind{"k": Key, "v": Numeric, "cls": Class}
	cols := []string{"v", "k"}
	srcs := map[string]Source{"csv": {Path: csvPath}, "parquet": {Path: filepath.Join(dir, "t.parquet")}, "sqlite": {SQLite: filepath.Join(dir, "t.db"), Table: "t"}}
	if pg := pgShared.Try(t); pg != nil {
		t.Setenv("COHORT_TEST_PG", pg.ConnString(pg.Password))
		srcs["postgres"] = Source{PostgresEnv: "COHORT_TEST_PG", Table: "t"}
	}
	for name, src := range srcs {
		t.Run(name, func(t *testing.T) {
			if name != "csv" {
				if err := Write(ctx, src, all); err != nil {
					t.Fatal(err)
				}
			}
			loaded, err := Open(ctx, src, "t", schema, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			v, _ := loaded.Column("v")
			k, _ := loaded.Column("k")
			for r := range loaded.NumRows() {
				want = append(want, fmt.Sprintf("%s|%s %v", v.Str[r], k.Str[r], v.Num[r]))
			}
			if err := Scan(ctx, src, schema, cols, ReadOptions{}, func(vals []string, nums []float64) error {
				got = append(got, fmt.Sprintf("%s %v", strings.Join(vals, "|"), nums[0]))
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) || len(got) != 50 {
				t.Fatalf("scanned %v, Open loads %v", got, want)
			}
			stop := errors.New("stop")
			n := 0
			if err := Scan(ctx, src, schema, cols, ReadOptions{}, func([]string, []float64) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
				t.Fatalf("a callback's error: %v after %d rows", err, n)
			}
			n = 0
			if err := Scan(ctx, src, schema, []string{"k", "secret"}, ReadOptions{}, func([]string, []float64) error { n++; return nil }); !errors.Is(err, ErrNoColumn) || n != 0 {
				t.Fatalf("a column outside the schema: %v after %d rows", err, n)
			}
		})
	}
	// Open's refusal: a value that is not a number, named by its line.
	bad := filepath.Join(dir, "bad.csv")
	if err := os.WriteFile(bad, []byte("k,v,cls\na,1,x\nb,zz,y\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, werr := Open(ctx, Source{Path: bad}, "t", schema, ReadOptions{})
	err = Scan(ctx, Source{Path: bad}, schema, []string{"k"}, ReadOptions{}, func([]string, []float64) error { return nil })
	if werr == nil || err == nil || err.Error() != werr.Error() {
		t.Fatalf("scan: %v; Open: %v", err, werr)
	}
}
