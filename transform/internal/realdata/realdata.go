// Package realdata loads the shared real tables package transform's tests
// and figures use: UCI Adult (adult.data, the 30,162 records without a
// missing value) and FATE's vertically split Breast Cancer Wisconsin
// (Diagnostic) data joined back into one table. They live outside the
// repository, in ../shared/data from its root or under COHORT_DATA_DIR;
// callers skip when Dir finds nothing.
package realdata

import (
	"fmt"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/internal/adultdata"
	"github.com/cohortdm/cohort/internal/shareddata"
	"github.com/cohortdm/cohort/table"
)

// Dir returns the shared data directory: $COHORT_DATA_DIR, or shared/data
// beside the repository (shareddata.Dir). from is a directory inside the
// repository (a test's working directory).
func Dir(from string) (string, error) { return shareddata.Dir(from, "", "") }

// AdultNumeric are Adult's numeric columns, the ones a transform recodes.
var AdultNumeric = []string{"age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"}

// Adult reads adult.data under dir as table "adult": its six numeric
// columns, its eight categorical ones unless numericOnly, and the class
// "income", in file order.
func Adult(dir string, numericOnly bool) (*table.Table, error) {
	recs, err := adultdata.Read(filepath.Join(dir, "adult"), "adult.data")
	if err != nil {
		return nil, err
	}
	t := &table.Table{Name: "adult"}
	for j, name := range adultdata.Names {
		kind := table.Categorical
		switch {
		case name == "income":
			kind = table.Class
		case slices.Contains(AdultNumeric, name):
			kind = table.Numeric
		case numericOnly:
			continue
		}
		col := &table.Column{Name: name, Kind: kind, Str: make([]string, len(recs))}
		for i, r := range recs {
			col.Str[i] = r[j]
		}
		if kind == table.Numeric {
			if col.Num, err = parse(col.Str); err != nil {
				return nil, fmt.Errorf("realdata: adult column %q: %w", name, err)
			}
		}
		t.Columns = append(t.Columns, col)
	}
	return t, nil
}

// Breast reads FATE's breast_hetero_guest.csv (id, y, x0..x9) and
// breast_hetero_host.csv (id, x0..x19) under dir/fate and joins them on
// id into table "breast": y (the class), g_x0..g_x9, h_x0..h_x19, without
// the id.
func Breast(dir string) (*table.Table, error) {
	guest, err := table.Load(filepath.Join(dir, "fate", "breast_hetero_guest.csv"), "guest", nil)
	if err != nil {
		return nil, err
	}
	host, err := table.Load(filepath.Join(dir, "fate", "breast_hetero_host.csv"), "host", nil)
	if err != nil {
		return nil, err
	}
	gid, err := guest.Column("id")
	if err != nil {
		return nil, err
	}
	hid, err := host.Column("id")
	if err != nil {
		return nil, err
	}
	hostRow := map[string]int{}
	for r, id := range hid.Str {
		hostRow[id] = r
	}
	out := &table.Table{Name: "breast"}
	for _, side := range []struct {
		t      *table.Table
		prefix string
	}{{guest, "g_"}, {host, "h_"}} {
		for _, c := range side.t.Columns {
			if c.Name == "id" {
				continue
			}
			col := &table.Column{Name: side.prefix + c.Name, Kind: c.Kind}
			if c.Name == "y" {
				col.Name, col.Kind = "y", table.Class
			}
			for g, id := range gid.Str {
				r, ok := g, true
				if side.t == host {
					r, ok = hostRow[id]
				}
				if !ok {
					return nil, fmt.Errorf("realdata: breast: an id of the guest is not in the host file")
				}
				col.Str = append(col.Str, c.Str[r])
				if c.Num != nil && col.Kind == table.Numeric {
					col.Num = append(col.Num, c.Num[r])
				}
			}
			out.Columns = append(out.Columns, col)
		}
	}
	return out, nil
}

func parse(s []string) ([]float64, error) {
	out := make([]float64, len(s))
	for i, v := range s {
		var err error
		if out[i], err = strconv.ParseFloat(v, 64); err != nil {
			return nil, fmt.Errorf("row %d: not a number", i+1)
		}
	}
	return out, nil
}
