package anonymize

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// Sun TV-5 and TV-6 (Table 4.1(a)): the normalised VI (0.5, 0.367, 0.133),
// P(Age) = 0.21 on the chain Gender, Age, Postcode and P(Postcode) = 0.266
// on Gender, Postcode, Age; the degrees of Def. 4.4 (birth date, 6 levels:
// 0.4 uniform from level 6 to 4, 0.0876 with utility weights from 6 to 5;
// gender 1); the decomposition of 1/8 (attribute degrees 0.0987, 0.0263, 0;
// one step of gender and of postcode: Table 4.1(c)).
func TestPurposeSunTV5TV6(t *testing.T) {
	gender := []string{"m", "m", "m", "f", "f", "f"}
	age := []string{"middle", "middle", "young", "young", "old", "old"}
	post := []string{"4350", "4350", "4351", "4352", "4353", "4353"}
	vi := NormaliseVI(VIMatrix([][]string{gender, age, post}))
	if math.Abs(vi[0][1]-0.5) > 5e-4 || math.Abs(vi[0][2]-0.367) > 5e-4 || math.Abs(vi[1][2]-0.133) > 5e-4 {
		t.Fatalf("normalised VI %v", vi)
	}
	p, err := Priorities(vi, []int{0, 1, 2})
	if err != nil || math.Abs(p[1]-0.21) > 5e-3 || p[0] != 1 || p[2] != 0 {
		t.Fatalf("chain G, A, P: %v %v", p, err)
	}
	p, _ = Priorities(vi, []int{0, 2, 1})
	if math.Abs(p[2]-0.266) > 5e-3 {
		t.Fatalf("chain G, P, A: %v", p)
	}
	if d := AttributeDegree(6, 2, 0); math.Abs(d-0.4) > 1e-12 {
		t.Errorf("Deg(6,4) uniform %v", d)
	}
	if d := AttributeDegree(6, 1, 1); math.Abs(d-0.0876) > 5e-5 {
		t.Errorf("Deg(6,5) utility %v", d)
	}
	if AttributeDegree(2, 1, 0) != 1 || AttributeDegree(2, 1, 1) != 1 {
		t.Error("gender's one step is not degree 1")
	}
	// priorities (gender 1, postcode 0.266, age 0), levels 2, 5 and 3
	prio := []float64{1, 0, 0.266}
	if steps := Decompose(1.0/8, prio, []int{2, 3, 5}, false); !slices.Equal(steps, []int{1, 0, 1}) {
		t.Errorf("decomposition steps %v, want gender 1, age 0, postcode 1", steps)
	}
	if g := 1 / 1.266 * 0.125; math.Abs(g-0.0987) > 5e-5 {
		t.Errorf("gender's share %v", g)
	}
}

// Priorities solve Def. 4.3's recursion exactly and stay in [0, 1] on
// random VI matrices.
func TestPrioritiesRecursion(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 3))
	for range 50 {
		m := 3 + rng.IntN(6)
		vi := make([][]float64, m)
		for i := range vi {
			vi[i] = make([]float64, m)
		}
		for i := range m {
			for j := i + 1; j < m; j++ {
				vi[i][j] = 0.1 + rng.Float64()
				vi[j][i] = vi[i][j]
			}
		}
		chain := ChainOrder(vi, 0, m-1)
		p, err := Priorities(vi, chain)
		if err != nil {
			t.Fatal(err)
		}
		for i := 1; i < m-1; i++ {
			a, b, c := chain[i-1], chain[i], chain[i+1]
			want := (vi[b][c]*p[a] + vi[a][b]*p[c]) / (vi[a][b] + vi[b][c])
			if math.Abs(p[b]-want) > 1e-9 || p[b] < -1e-12 || p[b] > 1+1e-12 {
				t.Fatalf("P = %v does not solve the recursion at %d", p, b)
			}
		}
	}
}

// Raise makes a decomposition k-anonymous by lifting the least useful
// attribute first.
func TestRaise(t *testing.T) {
	ds, _ := sunTV1(t)
	levels, err := Raise(ds, []int{0, 0}, []float64{1, 0}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(levels, []int{0, 2}) {
		t.Fatalf("levels %v, want zip raised to the top first", levels)
	}
	if _, err := Raise(ds, []int{0, 0}, []float64{1, 0}, 7); err == nil {
		t.Fatal("7-anonymity of 6 records")
	}
}
