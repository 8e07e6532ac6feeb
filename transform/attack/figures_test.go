//go:build figures

// The disclosure figures of docs/transform.md: Bu et al.'s covertype
// experiments (Figures 8 to 12, the combination table, the pattern
// disclosure table) on UCI Adult's six numeric attributes, which stand in
// for covertype's ten. Each test prints a markdown table with the machine
// load before and after. Run one with
//
//	go test -tags figures ./transform/attack -run Figure9 -v -count=1
//
// COHORT_TRIALS sets the trials per figure (default 500, the paper's).
package attack_test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/transform/attack"
	"github.com/cohortdm/cohort/transform/internal/dtree"
	"github.com/cohortdm/cohort/transform/internal/realdata"
)

// adult is the figures' data: Adult's numeric columns and the class.
type adult struct {
	t    *table.Table
	cls  []int32
	cols []*table.Column
}

func loadAdult(t *testing.T) adult {
	dir, err := realdata.Dir(".")
	if err != nil {
		t.Skip(err)
	}
	tb, err := realdata.Adult(dir, true)
	if err != nil {
		t.Skip(err)
	}
	cl, _ := tb.Column("income")
	_, cls := transform.Labels(cl.Str)
	return adult{t: tb, cls: cls, cols: tb.ColumnsOfKind(table.Numeric)}
}

func trials() int {
	if n, err := strconv.Atoi(os.Getenv("COHORT_TRIALS")); err == nil && n > 0 {
		return n
	}
	return 500
}

// rng is trial i's generator for a figure: every figure repeats.
func rng(fig string, i int) *rand.Rand {
	var s [32]byte
	copy(s[:], fig)
	s[30], s[31] = byte(i), byte(i>>8)
	return rand.New(rand.NewChaCha8(s))
}

func load() string { return "load average " + testkit.LoadAverage() }

// header prints a figure's title, the run's parameters and the load.
func header(title, params string, trials int) func() {
	start := time.Now()
	fmt.Printf("\n#### %s\n\n%s; %d trials; %s at the start", title, params, trials, load())
	return func() { fmt.Printf(", %s at the end; %v.\n", load(), time.Since(start).Round(time.Second)) }
}

// encode draws column c's key.
func encode(t *testing.T, a adult, c *table.Column, opt transform.Options) *transform.ColumnKey {
	k, err := transform.EncodeColumn(c.Name, c.Num, a.cls, opt)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// width is the dynamic range width (Figure 8), rho a share of it.
func width(k *transform.ColumnKey) float64 { return k.Stats().Width }

func pct(x float64) string { return fmt.Sprintf("%.1f%%", 100*x) }

// Figure 8: attribute statistics under ChooseMaxMP.
func TestFigure8Stats(t *testing.T) {
	a := loadAdult(t)
	done := header("Figure 8: attribute statistics (Adult)", "ChooseMaxMP, no minimum width", trials())
	defer done()
	fmt.Printf("\n\n| attr. | dynamic range width | # distinct | # discontinuities | # mono. pieces | avg length of mono. piece | total %% of mono. values |\n|---|---|---|---|---|---|---|\n")
	for _, c := range a.cols {
		s := encode(t, a, c, transform.Options{Rand: rng("f8", 0)}).Stats()
		fmt.Printf("| %s | %.0f | %d | %d | %d | %.1f | %s |\n", c.Name, s.Width, s.Distinct, s.Discontinuities, s.MonoPieces, s.AvgMonoLen, pct(s.MonoShare()))
	}
}

// domainRisk is the median domain disclosure of column c over the trials
// with the given transform, knowledge and fit.
func domainRisk(t *testing.T, a adult, c *table.Column, fig string, opt transform.Options, good, bad int, m attack.Method, rhoShare float64) float64 {
	var risks []float64
	for i := range trials() {
		r := rng(fig+c.Name, i)
		o := opt
		o.Rand = r
		k := encode(t, a, c, o)
		rho := rhoShare * width(k)
		g := attack.Fit(m, attack.KnowledgePoints(k, good, bad, rho, r))
		risks = append(risks, attack.Share(attack.Cracked(k, g, rho)))
	}
	return attack.Median(risks)
}

// Figure 9: domain disclosure per attribute, polyline fitting, sqrt(log).
func TestFigure9Domain(t *testing.T) {
	a := loadAdult(t)
	const rho = 0.02
	done := header("Figure 9: domain disclosure risk (Adult), median over trials", "polyline fit, F_mono = sqrt(log), ρ = 2% of the range width; expert = 4 good knowledge points, knowledgeable = 2, ignorant = 0 (face value)", trials())
	defer done()
	fmt.Printf("\n\n| attr. | no breakpoints, expert | ChooseBP, expert | ChooseMaxMP, expert | ChooseMaxMP, knowledgeable | ChooseMaxMP, ignorant | ChooseMaxMP, expert + 1 bad KP | constant guess: the true median |\n|---|---|---|---|---|---|---|---|\n")
	sq := []transform.Family{transform.SqrtLog}
	for _, c := range a.cols {
		mp := transform.Options{Families: sq}
		w := max(transform.DefaultBreakpoints, len(encode(t, a, c, transform.Options{Rand: rng("w", 0)}).Pieces)-1)
		cells := []float64{
			domainRisk(t, a, c, "f9a", transform.Options{Method: transform.Global, Families: sq}, 4, 0, attack.Polyline, rho),
			domainRisk(t, a, c, "f9b", transform.Options{Method: transform.BP, Breakpoints: w, Families: sq}, 4, 0, attack.Polyline, rho),
			domainRisk(t, a, c, "f9c", mp, 4, 0, attack.Polyline, rho),
			domainRisk(t, a, c, "f9d", mp, 2, 0, attack.Polyline, rho),
			domainRisk(t, a, c, "f9e", mp, 0, 0, attack.Polyline, rho),
			domainRisk(t, a, c, "f9f", mp, 4, 1, attack.Polyline, rho),
			medianGuess(t, a, c, rho),
		}
		fmt.Printf("| %s", c.Name)
		for _, x := range cells {
			fmt.Printf(" | %s", pct(x))
		}
		fmt.Printf(" |\n")
	}
}

// medianGuess is the share of distinct values within rho of the column's
// median row value: what a hacker cracks who guesses that one value for
// everything, whatever the recoding.
func medianGuess(t *testing.T, a adult, c *table.Column, rhoShare float64) float64 {
	k := encode(t, a, c, transform.Options{Rand: rng("med", 0)})
	rho := rhoShare * width(k)
	m := attack.Median(c.Num)
	return attack.Share(attack.Cracked(k, func(float64) float64 { return m }, rho))
}

// mostMono is the column with the most monochromatic pieces (covertype's
// attribute 10 in the paper's combination experiment).
func mostMono(t *testing.T, a adult) *table.Column {
	best, n := a.cols[0], -1
	for _, c := range a.cols {
		if s := encode(t, a, c, transform.Options{Rand: rng("mm", 0)}).Stats(); s.MonoPieces > n {
			best, n = c, s.MonoPieces
		}
	}
	return best
}

// The combination table and Figure 10 (§6.2.2) on the column with the
// most monochromatic pieces, ChooseMaxMP, expert hacker.
func TestCombination(t *testing.T) {
	a := loadAdult(t)
	c := mostMono(t, a)
	const rho = 0.02
	done := header("Combination of attacks (§6.2.2, Figure 10) on "+c.Name, "ChooseMaxMP, expert hacker (4 good knowledge points), ρ = 2% of the range width; the table: medians; the Venn regions and scorings (sqrt(log)): means over the trials", trials())
	defer done()
	fmt.Printf("\n\n| | polynomial | log | sqrt(log) |\n|---|---|---|---|\n")
	for _, m := range []attack.Method{attack.LinReg, attack.Spline, attack.Polyline} {
		fmt.Printf("| %v", m)
		for _, f := range []transform.Family{transform.Polynomial, transform.Log, transform.SqrtLog} {
			fmt.Printf(" | %s", pct(domainRisk(t, a, c, "cmb"+f.String(), transform.Options{Families: []transform.Family{f}}, 4, 0, m, rho)))
		}
		fmt.Printf(" |\n")
	}
	var sum attack.Combination
	sum.Regions = map[string]float64{}
	for i := range trials() {
		r := rng("venn", i)
		k := encode(t, a, c, transform.Options{Families: []transform.Family{transform.SqrtLog}, Rand: r})
		kps := attack.KnowledgePoints(k, 4, 0, rho*width(k), r)
		crack := func(m attack.Method) []bool { return attack.Cracked(k, attack.Fit(m, kps), rho*width(k)) }
		cmb := attack.Combine(crack(attack.LinReg), crack(attack.Spline), crack(attack.Polyline))
		sum.Union += cmb.Union / float64(trials())
		sum.Expected += cmb.Expected / float64(trials())
		sum.TwoOrMore += cmb.TwoOrMore / float64(trials())
		for k, v := range cmb.Regions {
			sum.Regions[k] += v / float64(trials())
		}
	}
	fmt.Printf("\n| P only | S only | L only | P∩S | P∩L | S∩L | P∩S∩L | union (\"add up\") | expected (k/3) | two or more agree |\n|---|---|---|---|---|---|---|---|---|---|\n|")
	for _, r := range []string{"P", "S", "L", "PS", "PL", "SL", "PSL"} {
		fmt.Printf(" %s |", pct(sum.Regions[r]))
	}
	fmt.Printf(" %s | %s | %s |\n", pct(sum.Union), pct(sum.Expected), pct(sum.TwoOrMore))
}

// Figure 11: the sorting attack in the worst case (the hacker knows the
// true minimum and the direction).
func TestFigure11Sorting(t *testing.T) {
	a := loadAdult(t)
	done := header("Figure 11: sorting attack, worst case (Adult), median over trials", "ChooseMaxMP, sqrt(log); the hacker knows the true minimum and the direction and maps the i-th smallest recoded value to min + i; cracked within ρ = 0 (exact) and ρ = 1% of the range width", trials())
	defer done()
	fmt.Printf("\n\n| attr. | # discontinuities | total %% of mono. values | crack %%, exact | crack %%, ρ = 1%% |\n|---|---|---|---|---|\n")
	for _, c := range a.cols {
		var exact, near []float64
		var s transform.ColumnStats
		for i := range trials() {
			k := encode(t, a, c, transform.Options{Families: []transform.Family{transform.SqrtLog}, Rand: rng("f11"+c.Name, i)})
			s = k.Stats()
			g := attack.Sorting(k, k.Values[0], 1, k.Direction)
			exact = append(exact, attack.Share(attack.Cracked(k, g, 0)))
			near = append(near, attack.Share(attack.Cracked(k, g, 0.01*s.Width)))
		}
		fmt.Printf("| %s | %d | %s | %s | %s |\n", c.Name, s.Discontinuities, pct(s.MonoShare()), pct(attack.Median(exact)), pct(attack.Median(near)))
	}
}

// Figure 12: subspace association disclosure. Curve fitting (polyline,
// expert) on every attribute; the sorting attack (worst case) on the one
// it cracks most; singles, the pairs and the triple of the three
// attributes curve fitting cracks most, and the sorting-cracked attribute
// paired with each of them.
func TestFigure12Subspace(t *testing.T) {
	a := loadAdult(t)
	const rho = 0.02
	done := header("Figure 12: subspace association disclosure risk (Adult), median over trials", "ChooseMaxMP, sqrt(log), ρ = 2% of each range width; polyline with 4 good knowledge points per attribute, the sorting attack (true minimum) where marked; risk = share of the 30,162 rows cracked in every attribute of the subspace", trials())
	defer done()
	n := len(a.cols)
	rank := make([][]int32, n)
	for j, c := range a.cols {
		_, rank[j] = transform.NewProfile(c.Num, a.cls)
	}
	fit := make([][][]bool, n)  // [attr][trial] cracks by curve fitting
	sort := make([][][]bool, n) // [attr][trial] cracks by sorting
	for i := range trials() {
		for j, c := range a.cols {
			r := rng("f12"+c.Name, i)
			k := encode(t, a, c, transform.Options{Families: []transform.Family{transform.SqrtLog}, Rand: r})
			w := width(k)
			fit[j] = append(fit[j], attack.Cracked(k, attack.Fit(attack.Polyline, attack.KnowledgePoints(k, 4, 0, rho*w, r)), rho*w))
			sort[j] = append(sort[j], attack.Cracked(k, attack.Sorting(k, k.Values[0], 1, k.Direction), rho*w))
		}
	}
	risk := func(attrs []int, sorted int) float64 {
		var out []float64
		for i := range trials() {
			var rk [][]int32
			var cr [][]bool
			for _, j := range attrs {
				rk = append(rk, rank[j])
				if j == sorted {
					cr = append(cr, sort[j][i])
				} else {
					cr = append(cr, fit[j][i])
				}
			}
			out = append(out, attack.SubspaceRisk(rk, cr))
		}
		return attack.Median(out)
	}
	single := make([]float64, n)
	sorted, best := 0, -1.0
	for j := range n {
		single[j] = risk([]int{j}, -1)
		if s := risk([]int{j}, j); s > best {
			sorted, best = j, s
		}
	}
	top := make([]int, n)
	for j := range top {
		top[j] = j
	}
	slices.SortFunc(top, func(x, y int) int { return -cmpF(single[x], single[y]) })
	top = top[:3]
	name := func(attrs []int, s int) string {
		var parts []string
		for _, j := range attrs {
			p := a.cols[j].Name
			if j == s {
				p += " (sorting)"
			}
			parts = append(parts, p)
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	type subspace struct {
		attrs  []int
		sorted int // the attribute the sorting attack cracks, or -1
	}
	list := []subspace{{top[:1], -1}, {top[1:2], -1}, {top[2:3], -1},
		{[]int{top[0], top[1]}, -1}, {[]int{top[0], top[2]}, -1}, {[]int{top[1], top[2]}, -1}, {top, -1},
		{[]int{sorted}, sorted}}
	for _, j := range top {
		if j != sorted {
			list = append(list, subspace{[]int{sorted, j}, sorted})
		}
	}
	fmt.Printf("\n\n| subspace | risk |\n|---|---|\n")
	for _, s := range list {
		fmt.Printf("| %s | %s |\n", name(s.attrs, s.sorted), pct(risk(s.attrs, s.sorted)))
	}
}

func cmpF(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}

// The pattern disclosure table (§6.4): an entropy tree grown to depth 20
// on the recoded table, an insider hacker (8 good knowledge points per
// attribute, polyline), ρ = 5% of each range width.
func TestPatternDisclosure(t *testing.T) {
	a := loadAdult(t)
	const rho, depth = 0.05, 20
	nt := min(trials(), 50)
	done := header("Pattern disclosure (§6.4, Adult)", fmt.Sprintf("ChooseMaxMP, sqrt(log); entropy tree to depth %d on the recoded table (30,162 rows, the six numeric attributes); insider hacker: 8 good knowledge points per attribute, polyline; ρ = 5%% of the range width (a tree per trial)", depth), nt)
	defer done()
	buckets := []string{"1", "2", "3", "4", "5", "6", "> 6"}
	paths := make([][]float64, len(buckets))
	cracks := make([][]float64, len(buckets))
	var risks []float64
	for i := range nt {
		r := rng("pat", i)
		rec, key, err := transform.Transform(a.t, "income", transform.Options{Families: []transform.Family{transform.SqrtLog}, Rand: r})
		if err != nil {
			t.Fatal(err)
		}
		mined, err := dtree.Build(rec, "income", dtree.Params{Criterion: dtree.Entropy, MaxDepth: depth})
		if err != nil {
			t.Fatal(err)
		}
		dec, err := transform.DecodeTreeWithTable(mined, key, a.t)
		if err != nil {
			t.Fatal(err)
		}
		crack, rh := map[string]func(float64) float64{}, map[string]float64{}
		for _, k := range key.Columns {
			if k.Recoded() {
				rh[k.Name] = rho * width(k)
				crack[k.Name] = attack.Fit(attack.Polyline, attack.KnowledgePoints(k, 8, 0, rh[k.Name], r))
			}
		}
		ps, err := attack.Paths(mined, dec, crack, rh)
		if err != nil {
			t.Fatal(err)
		}
		np, nc := make([]float64, len(buckets)), make([]float64, len(buckets))
		total := 0.0
		for _, p := range ps {
			b := min(p.Len, 7) - 1
			np[b]++
			if p.Cracked {
				nc[b]++
				total++
			}
		}
		for b := range buckets {
			paths[b] = append(paths[b], np[b])
			cracks[b] = append(cracks[b], nc[b])
		}
		risks = append(risks, total/float64(len(ps)))
	}
	fmt.Printf("\n\n| length of decision paths |")
	for _, b := range buckets {
		fmt.Printf(" %s |", b)
	}
	fmt.Printf("\n|---|---|---|---|---|---|---|---|\n| # of paths |")
	for b := range buckets {
		fmt.Printf(" %.0f |", attack.Median(paths[b]))
	}
	fmt.Printf("\n| # of cracks, median (max) |")
	for b := range buckets {
		fmt.Printf(" %.0f (%.0f) |", attack.Median(cracks[b]), slices.Max(cracks[b]))
	}
	fmt.Printf("\n\nPattern disclosure risk: median %s, max %s.", pct(attack.Median(risks)), pct(slices.Max(risks)))
}
