package pgen_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/pgen"
)

// The paper's UCI datasets besides Adult (Nursery, Car, CMC) are not in
// the repository: their figure tests read UCI's file from the path an
// environment variable names, and refuse a file that is not UCI's, so
// that a figure in docs/pgen.md cannot come from a damaged or altered
// copy. uciSet is what each .names file says of its dataset, written
// once here with the harness that reads, checks and cross-validates it.

// uciSet describes one UCI dataset as its .names file does.
type uciSet struct {
	name  string   // lower case: the seeds' prefix ("nursery")
	env   string   // the environment variable naming the file
	names []string // the columns in file order, the class last
	// domains are each categorical column's values (the class's too) in
	// the .names file's order; ranges are each numeric attribute's
	// bounds, integers.
	domains map[string][]string
	ranges  map[string][2]int
	rows    int
	classes map[string]int // rows per class
	// factorial: every combination of the attributes' values occurs
	// exactly once (Car and Nursery are full factorial designs).
	factorial bool
}

// attrs are the attributes, every column but the class.
func (d *uciSet) attrs() []string { return d.names[:len(d.names)-1] }

// class is the class column.
func (d *uciSet) class() string { return d.names[len(d.names)-1] }

// schema is the pgen schema of d: a ranged attribute numeric, as Adult's
// numeric attributes are, the others categorical.
func (d *uciSet) schema() *pgen.Schema {
	s := &pgen.Schema{Numeric: map[string]bool{}, ClassColumn: d.class()}
	for _, a := range d.attrs() {
		_, s.Numeric[a] = d.ranges[a]
	}
	return s
}

// records reads the file d.env names, skipping the test (with
// PGEN_FIGURES unset too) when it is unset, and fails when parse refuses
// it.
func (d *uciSet) records(t testing.TB) [][]string {
	if os.Getenv("PGEN_FIGURES") == "" {
		t.Skip("set PGEN_FIGURES=1")
	}
	path := os.Getenv(d.env)
	if path == "" {
		t.Skipf("no UCI %s data: set %s to the path of %s.data", d.name, d.env, d.name)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("%s: %v", d.env, err)
	}
	defer f.Close()
	recs, err := d.parse(f)
	if err != nil {
		t.Fatalf("%s: %v", d.env, err)
	}
	return recs
}

// errNotUCI is parse's refusal: the file is not the UCI dataset.
var errNotUCI = errors.New("not UCI's file")

// parse reads UCI's .data format (no header, comma-separated, blank lines
// and a CR before the newline ignored) and refuses, naming lines and
// columns but never values, a file that differs from what the .names file
// says: a line of other than len(names) fields, a value outside its
// column's domain or range, other than d.rows rows or d.classes's class
// counts, or, for a factorial design, a combination of attribute values
// twice.
func (d *uciSet) parse(r io.Reader) ([][]string, error) {
	var recs [][]string
	seen := map[string]bool{}
	sc := bufio.NewScanner(r)
	for line := 1; sc.Scan(); line++ {
		s := strings.TrimSpace(sc.Text())
		if s == "" {
			continue
		}
		rec := strings.Split(s, ",")
		if len(rec) != len(d.names) {
			return nil, fmt.Errorf("%w: line %d has %d fields, not %d", errNotUCI, line, len(rec), len(d.names))
		}
		for i, c := range d.names {
			if !d.valid(c, rec[i]) {
				return nil, fmt.Errorf("%w: line %d: a value of %s outside its domain", errNotUCI, line, c)
			}
		}
		if len(recs) == d.rows {
			return nil, fmt.Errorf("%w: more than %d rows", errNotUCI, d.rows)
		}
		key := strings.Join(rec[:len(rec)-1], ",")
		if d.factorial && seen[key] {
			return nil, fmt.Errorf("%w: line %d repeats an earlier row's attributes, in a full factorial design", errNotUCI, line)
		}
		seen[key] = true
		recs = append(recs, rec)
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(recs) != d.rows {
		return nil, fmt.Errorf("%w: %d rows, not %d", errNotUCI, len(recs), d.rows)
	}
	counts := map[string]int{}
	for _, rec := range recs {
		counts[rec[len(rec)-1]]++
	}
	if !maps.Equal(counts, d.classes) {
		return nil, fmt.Errorf("%w: the class counts differ from the .names file's", errNotUCI)
	}
	// d.rows distinct combinations, each in the domains: every one of
	// them once when d.rows is their number.
	if combos := d.combinations(); d.factorial && combos != d.rows {
		return nil, fmt.Errorf("%w: %d rows, but the domains have %d combinations", errNotUCI, d.rows, combos)
	}
	return recs, nil
}

// valid is whether v is in column c's domain or range.
func (d *uciSet) valid(c, v string) bool {
	if dom, ok := d.domains[c]; ok {
		return slices.Contains(dom, v)
	}
	b, ok := d.ranges[c]
	n, err := strconv.Atoi(v)
	return ok && err == nil && n >= b[0] && n <= b[1]
}

// combinations is the number of combinations of the categorical
// attributes' values.
func (d *uciSet) combinations() int {
	n := 1
	for _, a := range d.attrs() {
		n *= len(d.domains[a])
	}
	return n
}

// cvIterations is how many times the ten-fold cross-validation is
// repeated, each with its own folds (the paper averages five, §4).
const cvIterations = 5

// folds deals the records into ten folds stratified by class, the
// paper's ten-fold cross-validation (§4): each class's rows in an order
// drawn from the seed d.name and the iteration, dealt in turn, one class
// after another, to folds 0 to 9 (so every fold holds a tenth of each
// class, to one row). folds[f] are the indices of fold f's rows.
func (d *uciSet) folds(recs [][]string, iteration int) [10][]int {
	rng := job.Rand([]byte(d.name), fmt.Sprint("folds/", iteration))
	byClass := map[string][]int{}
	var classes []string
	for i, r := range recs {
		c := r[len(r)-1]
		if byClass[c] == nil {
			classes = append(classes, c)
		}
		byClass[c] = append(byClass[c], i)
	}
	slices.Sort(classes)
	var folds [10][]int
	next := 0
	for _, c := range classes {
		rows := byClass[c]
		rng.Shuffle(len(rows), func(i, j int) { rows[i], rows[j] = rows[j], rows[i] })
		for _, i := range rows {
			folds[next%10] = append(folds[next%10], i)
			next++
		}
	}
	return folds
}

// split is fold f's test records and the other nine folds' records (the
// training set), the latter shuffled (seed d.name, "parties/f": the same
// seed for fold f of every iteration, whose folds hold other rows), so
// that dealing them to n parties (row i to party i mod n) is a random
// partition into tables of equal size, as the paper's is.
func (d *uciSet) split(recs [][]string, folds [10][]int, f int) (train, test [][]string) {
	for g, rows := range folds {
		for _, i := range rows {
			if g == f {
				test = append(test, recs[i])
			} else {
				train = append(train, recs[i])
			}
		}
	}
	rng := job.Rand([]byte(d.name), fmt.Sprint("parties/", f))
	rng.Shuffle(len(train), func(i, j int) { train[i], train[j] = train[j], train[i] })
	return train, test
}

// deal splits records over n parties, record i to party i mod n.
func deal(recs [][]string, n int) [][][]string {
	parts := make([][][]string, n)
	for i, r := range recs {
		parts[i%n] = append(parts[i%n], r)
	}
	return parts
}
