package anonymize

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/table"
)

// ARX's Adult configuration (data/README.md): adult/arx/adult.csv, 30,162
// records, nine columns, all quasi-identifiers, with ARX's hierarchies.
var arxQID = []string{"sex", "age", "race", "marital-status", "education", "native-country", "workclass", "occupation", "salary-class"}

func adultRoot() string {
	if d := os.Getenv("COHORT_ADULT_DIR"); d != "" {
		return d
	}
	return adultDir
}

var arxOnce struct {
	sync.Once
	tab *table.Table
	tax map[string]*Taxonomy
	err error
}

// loadARXAdult reads adult/arx/adult.csv (`;`-separated, CRLF) and its
// hierarchies; the table package reads comma-separated files only.
func loadARXAdult(t testing.TB) (*table.Table, map[string]*Taxonomy) {
	t.Helper()
	needAdult(t)
	arxOnce.Do(func() {
		dir := filepath.Join(adultRoot(), "arx")
		f, err := os.Open(filepath.Join(dir, "adult.csv"))
		if err != nil {
			arxOnce.err = err
			return
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		tab := &table.Table{Name: "adult"}
		first := true
		for sc.Scan() {
			fs := strings.Split(strings.TrimRight(sc.Text(), "\r"), ";")
			if first {
				for _, h := range fs {
					tab.Columns = append(tab.Columns, &table.Column{Name: h, Kind: table.Categorical})
				}
				first = false
				continue
			}
			if len(fs) != len(tab.Columns) {
				continue
			}
			for i, v := range fs {
				tab.Columns[i].Str = append(tab.Columns[i].Str, v)
			}
		}
		tax := map[string]*Taxonomy{}
		for _, c := range arxQID {
			tx, err := LoadARXFile(filepath.Join(dir, "adult_hierarchy_"+c+".csv"), c, c == "age")
			if err != nil {
				arxOnce.err = err
				return
			}
			tax[c] = tx
		}
		arxOnce.tab, arxOnce.tax = tab, tax
	})
	if arxOnce.err != nil {
		t.Fatal(arxOnce.err)
	}
	return arxOnce.tab, arxOnce.tax
}

func arxDataset(t testing.TB) *Dataset {
	tab, tax := loadARXAdult(t)
	ds, err := Encode(tab, arxQID, tax)
	if err != nil {
		t.Fatal(err)
	}
	return ds
}

// Adult-size runs are behind COHORT_ADULT=1 so that the default tests stay fast.
func needAdultRun(t *testing.T) {
	t.Helper()
	if os.Getenv("COHORT_ADULT") == "" {
		t.Skip("set COHORT_ADULT=1 to run on UCI Adult")
	}
	needAdult(t)
}

func TestAdultFullDomain5(t *testing.T) {
	needAdultRun(t)
	ds := arxDataset(t)
	if ds.N != 30162 {
		t.Fatalf("%d records", ds.N)
	}
	res, err := OptimalFullDomain(ds, 5)
	if err != nil {
		t.Fatal(err)
	}
	pub := ds.Publish(res.Gen)
	gs, _ := Groups(pub, arxQID)
	for _, g := range gs {
		if len(g) < 5 {
			t.Fatalf("class of %d", len(g))
		}
	}
	t.Logf("levels %v NCP %.4f classes %d min %d checked %d of %d", res.Levels, res.NCP, res.Classes, res.MinGroup, res.Checked, res.Lattice)
}

// go test ./anonymize -run '^$' -bench FullDomainAdult -benchtime 20x
func BenchmarkFullDomainAdult(b *testing.B) {
	ds := arxDataset(b)
	for _, k := range []int{5} {
		b.Run("k="+itoa(k), func(b *testing.B) {
			var res *FullDomainResult
			for b.Loop() {
				var err error
				if res, err = OptimalFullDomain(ds, k); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(res.NCP*100, "NCP%")
			b.ReportMetric(float64(res.Checked), "checked")
		})
	}
}

func itoa(k int) string {
	s := ""
	for {
		s = string(rune('0'+k%10)) + s
		k /= 10
		if k == 0 {
			return s
		}
	}
}
