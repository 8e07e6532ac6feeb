package transform

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
)

// Family is a family of strictly increasing functions, F_mono of Bu et al.
// §5.3 and §6.1: the experiments there draw from linear functions,
// higher-order polynomials, log and sqrt(log). Each is used on a piece as
// a map of [0, 1] onto [0, 1] with random parameters; the piece's
// position, stretch and direction are applied around it.
type Family int

// The families of F_mono.
const (
	Linear Family = iota
	Polynomial
	Log
	SqrtLog
)

// Families lists every family, the default of Options.Families.
var Families = []Family{Linear, Polynomial, Log, SqrtLog}

var familyNames = []string{"linear", "polynomial", "log", "sqrtlog"}

// String is the family's name as flags and figures spell it.
func (f Family) String() string {
	if f < 0 || int(f) >= len(familyNames) {
		return fmt.Sprintf("family(%d)", int(f))
	}
	return familyNames[f]
}

// ParseFamilies reads a comma-separated list of family names.
func ParseFamilies(s string) ([]Family, error) {
	var out []Family
	for _, name := range strings.Split(s, ",") {
		name = strings.TrimSpace(name)
		found := false
		for i, n := range familyNames {
			if n == name {
				out, found = append(out, Family(i)), true
			}
		}
		if !found {
			return nil, fmt.Errorf("%w: families: unknown family (want linear, polynomial, log or sqrtlog)", ErrOptions)
		}
	}
	return out, nil
}

// curve is one drawn member of a family: a strictly increasing map of
// [0, 1] onto [0, 1].
type curve struct {
	fam  Family
	coef []float64 // Polynomial: a_1..a_d >= 0, a_1 > 0, summing to 1
	c    float64   // Log, SqrtLog: the curvature, log(1 + c·u)
}

// drawCurve draws a family from fams and its parameters: polynomial
// degree 2 to 4 with random non-negative coefficients (a_1 at least 5% so
// the slope never vanishes), log curvature c = 10^U(0, 2).
func drawCurve(fams []Family, rng *rand.Rand) curve {
	c := curve{fam: fams[rng.IntN(len(fams))]}
	switch c.fam {
	case Polynomial:
		c.coef = make([]float64, 2+rng.IntN(3))
		sum := 0.0
		for i := range c.coef {
			c.coef[i] = rng.Float64()
			if i == 0 {
				c.coef[i] = 0.05 + 0.95*c.coef[i]
			}
			sum += c.coef[i]
		}
		for i := range c.coef {
			c.coef[i] /= sum
		}
	case Log, SqrtLog:
		c.c = math.Pow(10, 2*rng.Float64())
	}
	return c
}

// at evaluates the curve at u in [0, 1].
func (c curve) at(u float64) float64 {
	switch c.fam {
	case Polynomial:
		y, p := 0.0, 1.0
		for _, a := range c.coef {
			p *= u
			y += a * p
		}
		return y
	case Log:
		return math.Log1p(c.c*u) / math.Log1p(c.c)
	case SqrtLog:
		return math.Sqrt(math.Log1p(c.c*u) / math.Log1p(c.c))
	}
	return u
}
