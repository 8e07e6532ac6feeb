package table

import (
	"bytes"
	"errors"
	"github.com/cohortdm/cohort/internal/shareddata"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestReadWithSchema(t *testing.T) {
	in := "id, age ,workclass,salary,secret\n" +
		"1, 39, State-gov, <=50K,x\n" +
		"2,50 ,Self-emp,>50K,y\n" +
		"3,-1.5e1,\" Private \",<=50K,z\n"
	schema := map[string]Kind{"id": ID, "age": Numeric, "workclass": Categorical, "salary": Class}
	tb, err := Read(strings.NewReader(in), "t.csv", "T", schema)
	if err != nil {
		t.Fatal(err)
	}
	if tb.Name != "T" || tb.NumRows() != 3 {
		t.Fatalf("name %q rows %d", tb.Name, tb.NumRows())
	}
	var names []string
	for _, c := range tb.Columns {
		names = append(names, c.Name)
	}
	if want := []string{"id", "age", "workclass", "salary"}; !slices.Equal(names, want) {
		t.Fatalf("columns %v, want %v (file order, extra column dropped)", names, want)
	}
	age, err := tb.Column("age")
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(age.Num, []float64{39, 50, -15}) || !slices.Equal(age.Str, []string{"39", "50", "-1.5e1"}) {
		t.Fatalf("age %v %q", age.Num, age.Str)
	}
	wc, _ := tb.Column("workclass")
	if wc.Num != nil || !slices.Equal(wc.Str, []string{"State-gov", "Self-emp", "Private"}) {
		t.Fatalf("workclass %v %q", wc.Num, wc.Str)
	}
	if got := tb.ColumnsOfKind(Class); len(got) != 1 || got[0].Name != "salary" {
		t.Fatalf("class columns %v", got)
	}
	if got := tb.ColumnsOfKind(Key); len(got) != 0 {
		t.Fatalf("key columns %v", got)
	}
	if _, err := tb.Column("secret"); !errors.Is(err, ErrNoColumn) || !strings.Contains(err.Error(), `"T"`) || !strings.Contains(err.Error(), `"secret"`) {
		t.Fatalf("Column(secret) = %v", err)
	}
}

func TestReadInfer(t *testing.T) {
	in := "\ufeffa,b,c,d\n1,x,1,NaN\n2.5,2,,1\n"
	tb, err := Read(strings.NewReader(in), "t.csv", "T", nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Kind{"a": Numeric, "b": Categorical, "c": Categorical, "d": Categorical}
	for _, c := range tb.Columns {
		if c.Kind != want[c.Name] {
			t.Errorf("column %q kind %q, want %q", c.Name, c.Kind, want[c.Name])
		}
		if (c.Kind == Numeric) != (c.Num != nil) {
			t.Errorf("column %q: Num set %v for kind %q", c.Name, c.Num != nil, c.Kind)
		}
	}
	a, _ := tb.Column("a")
	if !slices.Equal(a.Num, []float64{1, 2.5}) {
		t.Fatalf("a = %v", a.Num)
	}
	// Header only: no evidence of numbers, so categorical.
	tb, err = Read(strings.NewReader("a,b\n"), "h.csv", "H", nil)
	if err != nil || tb.NumRows() != 0 || tb.Columns[0].Kind != Categorical {
		t.Fatalf("header-only: %v %+v", err, tb)
	}
}

func TestReadErrors(t *testing.T) {
	num := map[string]Kind{"a": Numeric, "b": Categorical}
	cases := []struct {
		name, in string
		schema   map[string]Kind
		is       error
		want     []string // substrings of the message
		hide     string   // a cell value the message must not quote
	}{
		{"empty", "", nil, ErrFormat, []string{"f.csv", "empty file"}, ""},
		{"blank lines", "\n\n", nil, ErrFormat, []string{"empty file"}, ""},
		{"ragged", "a,b\n1,2\n3\n", num, ErrFormat, []string{"f.csv:3", "1 fields", "header has 2"}, ""},
		{"ragged long", "a,b\n1,2,3\n", nil, ErrFormat, []string{"f.csv:2", "3 fields"}, ""},
		{"not a number", "a,b\n1,x\n2x,y\n", num, ErrFormat, []string{"f.csv:3", `column "a"`, "not a finite number"}, "2x"},
		{"question mark", "a,b\n?,x\n", num, ErrFormat, []string{"f.csv:2", "not a finite number"}, "?"},
		{"empty numeric", "a,b\n1,x\n  ,y\n", num, ErrFormat, []string{"f.csv:3", `column "a"`, "empty"}, ""},
		{"infinite", "a,b\n1e999,x\n", num, ErrFormat, []string{"f.csv:2", "finite"}, ""},
		{"nan", "a,b\nnan,x\n", num, ErrFormat, []string{"f.csv:2", "finite"}, ""},
		{"duplicate header", "a,b,a\n1,2,3\n", nil, ErrFormat, []string{"f.csv:1", `duplicate column "a"`}, ""},
		{"duplicate after trim", "a, a\n1,2\n", num, ErrFormat, []string{`duplicate column "a"`}, ""},
		{"empty header name", "a,,c\n1,2,3\n", nil, ErrFormat, []string{"f.csv:1", "field 2 is empty"}, ""},
		{"missing column", "a,c\n1,2\n", num, ErrSchema, []string{"f.csv", `column "b"`}, ""},
		{"no header", "1,x\n2,y\n", num, ErrSchema, []string{"f.csv", "missing header"}, ""},
		{"unknown kind", "a,b\n1,2\n", map[string]Kind{"a": "float"}, ErrSchema, []string{`column "a"`, `"float"`}, ""},
		{"empty schema", "a,b\n1,2\n", map[string]Kind{}, ErrSchema, []string{"no columns"}, ""},
		{"bad quote", "a,b\n1,\"x\n", nil, ErrFormat, []string{"f.csv:2"}, ""},
		{"bare quote", "a,b\n1,x\"y\n", nil, ErrFormat, []string{"f.csv:2"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tb, err := Read(strings.NewReader(c.in), "f.csv", "F", c.schema)
			if err == nil {
				t.Fatalf("no error, table %+v", tb)
			}
			if !errors.Is(err, c.is) {
				t.Errorf("error %q is not %v", err, c.is)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
			// A party's error can reach the Raft log as its failure
			// reason, so it names the row and column, never the cell.
			if c.hide != "" && strings.Contains(err.Error(), c.hide) {
				t.Errorf("error %q quotes the private cell value %q", err, c.hide)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestReadIOError(t *testing.T) {
	_, err := Read(failingReader{}, "f.csv", "F", nil)
	if err == nil || !strings.Contains(err.Error(), "disk on fire") || !strings.Contains(err.Error(), "f.csv") {
		t.Fatalf("err = %v", err)
	}
}

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "s.csv")
	if err := os.WriteFile(p, []byte("dealer,gain\nd1,3\nd2,4.5\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tb, err := Load(p, "S", map[string]Kind{"dealer": Key, "gain": Numeric})
	if err != nil {
		t.Fatal(err)
	}
	if tb.NumRows() != 2 || len(tb.ColumnsOfKind(Key)) != 1 {
		t.Fatalf("table %+v", tb)
	}
	_, err = Load(filepath.Join(dir, "nope.csv"), "S", nil)
	if !errors.Is(err, os.ErrNotExist) || !strings.Contains(err.Error(), "nope.csv") {
		t.Fatalf("missing file: %v", err)
	}
	// The path appears once: os.Open's error already names it.
	if n := strings.Count(err.Error(), "nope.csv"); n != 1 {
		t.Errorf("missing file error names the path %d times: %v", n, err)
	}
}

func TestParseKind(t *testing.T) {
	for _, s := range []string{"key", "numeric", "categorical", "class", "id", " Numeric "} {
		k, err := ParseKind(s)
		if err != nil || string(k) != strings.ToLower(strings.TrimSpace(s)) {
			t.Errorf("ParseKind(%q) = %q, %v", s, k, err)
		}
	}
	for _, s := range []string{"", "float", "ids"} {
		if _, err := ParseKind(s); !errors.Is(err, ErrSchema) {
			t.Errorf("ParseKind(%q) err = %v", s, err)
		}
	}
}

func TestEmptyTable(t *testing.T) {
	var tb Table
	if tb.NumRows() != 0 || tb.ColumnsOfKind(Numeric) != nil {
		t.Fatal("zero table not empty")
	}
	if _, err := tb.Column("x"); err == nil {
		t.Fatal("zero table has a column")
	}
}

func FuzzRead(f *testing.F) {
	f.Add([]byte("a,b\n1,x\n2,y\n"), false)
	f.Add([]byte("a,b\n1,x\n2,y\n"), true)
	f.Add([]byte("a, b\n\"1\n\",x\n"), false)
	f.Add([]byte("\ufeffa,a\n"), true)
	f.Add([]byte("a,b,c\n1e308,?,\n"), false)
	f.Fuzz(func(t *testing.T, data []byte, withSchema bool) {
		var schema map[string]Kind
		if withSchema {
			schema = map[string]Kind{"a": Numeric, "b": Categorical}
		}
		tb, err := Read(bytes.NewReader(data), "fuzz.csv", "F", schema)
		if err != nil {
			if tb != nil {
				t.Fatal("table returned with an error")
			}
			return
		}
		n := tb.NumRows()
		for _, c := range tb.Columns {
			if len(c.Str) != n {
				t.Fatalf("column %q has %d values, table %d rows", c.Name, len(c.Str), n)
			}
			if c.Kind == Numeric {
				if len(c.Num) != n {
					t.Fatalf("numeric column %q has %d numbers, %d rows", c.Name, len(c.Num), n)
				}
				for _, x := range c.Num {
					if math.IsNaN(x) || math.IsInf(x, 0) {
						t.Fatalf("column %q holds %v", c.Name, x)
					}
				}
			} else if c.Num != nil {
				t.Fatalf("non-numeric column %q has numbers", c.Name)
			}
		}
		if withSchema && len(tb.Columns) != 2 {
			t.Fatalf("schema of 2 columns loaded %d", len(tb.Columns))
		}
	})
}

// adultHeader names the columns of the UCI Adult file, which has no header row.
const adultHeader = "age,workclass,fnlwgt,education,education-num,marital-status,occupation," +
	"relationship,race,sex,capital-gain,capital-loss,hours-per-week,native-country,salary\n"

func BenchmarkLoadAdult(b *testing.B) {
	dir, err := shareddata.Dir(".", "adult", "COHORT_ADULT_DIR")
	if err != nil {
		b.Skipf("Adult data not available: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "adult.data"))
	if err != nil {
		b.Skipf("Adult data not available: %v", err)
	}
	schema := map[string]Kind{
		"age": Numeric, "workclass": Categorical, "fnlwgt": Numeric, "education": Categorical,
		"education-num": Numeric, "marital-status": Categorical, "occupation": Categorical,
		"relationship": Categorical, "race": Categorical, "sex": Categorical,
		"capital-gain": Numeric, "capital-loss": Numeric, "hours-per-week": Numeric,
		"native-country": Categorical, "salary": Class,
	}
	b.SetBytes(int64(len(adultHeader) + len(data)))
	var rows int
	for b.Loop() {
		r := io.MultiReader(strings.NewReader(adultHeader), bytes.NewReader(data))
		tb, err := Read(r, "adult.data", "adult", schema)
		if err != nil {
			b.Fatal(err)
		}
		rows = tb.NumRows()
	}
	b.ReportMetric(float64(rows), "rows")
}
