package bicluster_test

import (
	"strings"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/table"
)

// FuzzCHawkCSV: any CSV a party might export either fails to load with an
// error or runs through cHawk without panicking, every bicluster inside
// the matrix.
func FuzzCHawkCSV(f *testing.F) {
	for _, s := range []string{
		"id,a,b\nx,1,2\ny,3,4\n",
		"id,a,b,c,d,e\n1,1,1,1,1,1\n2,1,1,1,1,1\n3,1,1,1,1,1\n4,1,1,1,1,1\n5,1,1,1,1,1\n6,0,0,0,0,0\n",
		"id,a\nx,-1e308\ny,1e308\n",
		"id,a,b\nx,1e308,1\ny,1e308,1\n",
		"id,a,b\nx,0,0\n",
		"id,a,b\nx,1,oops\n",
		"a\n1\n",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, csv string) {
		tb, err := table.Read(strings.NewReader(csv), "f.csv", "f", nil)
		if err != nil {
			return
		}
		m, err := bicluster.FromTable(tb)
		if err != nil {
			return
		}
		p := bicluster.DefaultParams()
		p.MinRows, p.MinCols = 1, 1
		res, err := bicluster.CHawk(m, []byte("fuzz"), p)
		if err != nil {
			t.Fatalf("loaded matrix failed: %v", err)
		}
		for _, b := range res.Biclusters {
			if len(b.Rows) == 0 || len(b.Cols) == 0 || b.Rows[len(b.Rows)-1] >= m.Rows || b.Cols[len(b.Cols)-1] >= m.Cols {
				t.Fatalf("bicluster %v outside %d×%d", b, m.Rows, m.Cols)
			}
		}
	})
}
