package pgen_test

import (
	"fmt"
	"strings"
	"testing"
)

// UCI's Car Evaluation (Bohanec, Rajkovič; UCI Machine Learning
// Repository, CC BY 4.0), in the paper's Figure 5 beside Adult and
// Nursery: 1,728 rows, six categorical attributes, every combination of
// their values once, and a class of four values. The figure tests read
// UCI's car.data from the file CAR_DATA names.
var car = &uciSet{
	name:  "car",
	env:   "CAR_DATA",
	names: []string{"buying", "maint", "doors", "persons", "lug_boot", "safety", "class"},
	domains: map[string][]string{ // car.names, in its order
		"buying":   {"vhigh", "high", "med", "low"},
		"maint":    {"vhigh", "high", "med", "low"},
		"doors":    {"2", "3", "4", "5more"},
		"persons":  {"2", "4", "more"},
		"lug_boot": {"small", "med", "big"},
		"safety":   {"low", "med", "high"},
		"class":    {"unacc", "acc", "good", "vgood"},
	},
	rows:      1728,
	classes:   map[string]int{"unacc": 1210, "acc": 384, "good": 69, "vgood": 65},
	factorial: true,
}

// carHierarchies are the generalisation hierarchies LD uses on Car, by
// Nursery's rule (nurseryHierarchies): every attribute is ordinal, a
// value goes to a group of values adjacent in car.names's order (pairs
// of four values; of three, the first two and the last), then to *.
var carHierarchies = map[string]string{
	"buying":   "vhigh;vhigh-high;*\nhigh;vhigh-high;*\nmed;med-low;*\nlow;med-low;*\n",
	"maint":    "vhigh;vhigh-high;*\nhigh;vhigh-high;*\nmed;med-low;*\nlow;med-low;*\n",
	"doors":    "2;2-3;*\n3;2-3;*\n4;4-5more;*\n5more;4-5more;*\n",
	"persons":  "2;2-4;*\n4;2-4;*\nmore;more;*\n",
	"lug_boot": "small;small-med;*\nmed;small-med;*\nbig;big;*\n",
	"safety":   "low;low-med;*\nmed;low-med;*\nhigh;high;*\n",
}

// TestCarHierarchies checks carHierarchies (checkHierarchies).
func TestCarHierarchies(t *testing.T) { checkHierarchies(t, car, carHierarchies) }

// TestCarLD is LD against PPGEN on Car (PGEN_FIGURES=1, CAR_DATA; ld),
// of which the paper says, after its Figure 7 on Nursery, "Similar
// results were obtained with the Car dataset" (§4.2).
func TestCarLD(t *testing.T) { ld(t, car, carHierarchies) }

// UCI's Contraceptive Method Choice (Tjen-Sien Lim; UCI Machine Learning
// Repository, CC BY 4.0), one of the paper's five datasets (Table 1)
// whose figures it omits as "similar": 1,473 rows of the 1987 National
// Indonesia Contraceptive Prevalence Survey, two numeric attributes
// (the wife's age, the number of children ever born), seven coded
// categorical ones and a class of three values (1 no use, 2 long-term
// method, 3 short-term method). The figure tests read UCI's cmc.data
// from the file CMC_DATA names.
var cmc = &uciSet{
	name:  "cmc",
	env:   "CMC_DATA",
	names: []string{"wife_age", "wife_education", "husband_education", "children", "wife_religion", "wife_working", "husband_occupation", "living_standard", "media_exposure", "method"},
	domains: map[string][]string{ // cmc.names's codes
		"wife_education":     {"1", "2", "3", "4"},
		"husband_education":  {"1", "2", "3", "4"},
		"wife_religion":      {"0", "1"},
		"wife_working":       {"0", "1"},
		"husband_occupation": {"1", "2", "3", "4"},
		"living_standard":    {"1", "2", "3", "4"},
		"media_exposure":     {"0", "1"},
		"method":             {"1", "2", "3"},
	},
	ranges:  map[string][2]int{"wife_age": {16, 49}, "children": {0, 16}},
	rows:    1473,
	classes: map[string]int{"1": 629, "2": 333, "3": 511},
}

// TestCarBaselines is TestNurseryBaselines on Car (PGEN_FIGURES=1,
// CAR_DATA; baselines).
func TestCarBaselines(t *testing.T) { baselines(t, car) }

// TestCMCBaselines is TestNurseryBaselines on CMC (PGEN_FIGURES=1,
// CMC_DATA; baselines), its two numeric attributes numeric as Adult's
// are.
func TestCMCBaselines(t *testing.T) { baselines(t, cmc) }

// cmcHierarchies are the generalisation hierarchies LD uses on CMC. The
// coded attributes follow Nursery's rule (nurseryHierarchies): an ordinal
// one of four values (the two educations, the standard of living) goes to
// pairs of adjacent codes, then to *; the husband's occupation, nominal
// in cmc.names, and the three of two values go straight to *. The two
// numeric attributes get intervals, as ARX's hierarchy of Adult's age:
// the wife's age in 5 and 10 years, the number of children in 3 and 6.
var cmcHierarchies = map[string]string{
	"wife_age":           intervalHierarchy(16, 49, 5, 10),
	"wife_education":     "1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n",
	"husband_education":  "1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n",
	"children":           intervalHierarchy(0, 16, 3, 6),
	"wife_religion":      "0;*\n1;*\n",
	"wife_working":       "0;*\n1;*\n",
	"husband_occupation": "1;*\n2;*\n3;*\n4;*\n",
	"living_standard":    "1;1-2;*\n2;1-2;*\n3;3-4;*\n4;3-4;*\n",
	"media_exposure":     "0;*\n1;*\n",
}

// intervalHierarchy is an ARX hierarchy of the integers lo to hi: each
// value, then the interval of each width (aligned on multiples of it, as
// ARX's Adult age is: 15-19, 10-19), then *.
func intervalHierarchy(lo, hi int, widths ...int) string {
	var b strings.Builder
	for v := lo; v <= hi; v++ {
		fmt.Fprint(&b, v)
		for _, w := range widths {
			from := v / w * w
			fmt.Fprintf(&b, ";%d-%d", from, from+w-1)
		}
		b.WriteString(";*\n")
	}
	return b.String()
}

// TestCMCHierarchies checks cmcHierarchies (checkHierarchies; a numeric
// attribute's intervals by checkIntervals).
func TestCMCHierarchies(t *testing.T) {
	checkHierarchies(t, cmc, cmcHierarchies, "husband_occupation")
}

// TestCMCLD is LD against PPGEN on CMC (PGEN_FIGURES=1, CMC_DATA; ld),
// which the paper's Table 1 lists and its figures omit; LD generalises
// its two numeric attributes by intervals (cmcHierarchies).
func TestCMCLD(t *testing.T) { ld(t, cmc, cmcHierarchies) }
