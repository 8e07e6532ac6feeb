package pgen_test

import "testing"

// UCI's Nursery (Olave, Rajkovič, Bohanec, 1989; UCI Machine Learning
// Repository, CC BY 4.0), the dataset of the paper's Figures 5 to 7:
// 12,960 rows, eight categorical attributes and a class of five values.
// It is not in the repository; the figure tests read it from the file
// NURSERY_DATA names (UCI's nursery.data: no header, comma-separated).

// nursery is Nursery as nursery.names describes it.
var nursery = &uciSet{
	name:  "nursery",
	env:   "NURSERY_DATA",
	names: []string{"parents", "has_nurs", "form", "children", "housing", "finance", "social", "health", "class"},
	domains: map[string][]string{ // nursery.names, in its order
		"parents":  {"usual", "pretentious", "great_pret"},
		"has_nurs": {"proper", "less_proper", "improper", "critical", "very_crit"},
		"form":     {"complete", "completed", "incomplete", "foster"},
		"children": {"1", "2", "3", "more"},
		"housing":  {"convenient", "less_conv", "critical"},
		"finance":  {"convenient", "inconv"},
		"social":   {"nonprob", "slightly_prob", "problematic"},
		"health":   {"recommended", "priority", "not_recom"},
		"class":    {"not_recom", "recommend", "very_recom", "priority", "spec_prior"},
	},
	rows:      12960,
	classes:   map[string]int{"not_recom": 4320, "recommend": 2, "very_recom": 328, "priority": 4266, "spec_prior": 4044},
	factorial: true,
}

// nurseryHierarchies are the generalisation hierarchies LD uses on
// Nursery, which ARX's examples lack (docs/pgen.md lists them): an
// ordinal attribute of three or more values (nursery.names orders them)
// goes to its group of adjacent values, then to *; a nominal one (form)
// or one of two values (finance) straight to *. ARX's format: one line
// per value, from the value to the root.
var nurseryHierarchies = map[string]string{
	"parents":  "usual;usual-pretentious;*\npretentious;usual-pretentious;*\ngreat_pret;great_pret;*\n",
	"has_nurs": "proper;proper-less_proper;*\nless_proper;proper-less_proper;*\nimproper;improper-very_crit;*\ncritical;improper-very_crit;*\nvery_crit;improper-very_crit;*\n",
	"form":     "complete;*\ncompleted;*\nincomplete;*\nfoster;*\n",
	"children": "1;1-2;*\n2;1-2;*\n3;3-more;*\nmore;3-more;*\n",
	"housing":  "convenient;convenient-less_conv;*\nless_conv;convenient-less_conv;*\ncritical;critical;*\n",
	"finance":  "convenient;*\ninconv;*\n",
	"social":   "nonprob;nonprob-slightly_prob;*\nslightly_prob;nonprob-slightly_prob;*\nproblematic;problematic;*\n",
	"health":   "recommended;recommended-priority;*\npriority;recommended-priority;*\nnot_recom;not_recom;*\n",
}

// TestNurseryBaselines is TestAdultBaselines on Nursery, the paper's own
// dataset for Figures 5 and 6 (PGEN_FIGURES=1, NURSERY_DATA; baselines).
func TestNurseryBaselines(t *testing.T) { baselines(t, nursery) }

// TestNurseryHierarchies checks the hierarchies LD uses on Nursery
// (checkHierarchies): form, nominal, and finance, of two values, go
// straight to *.
func TestNurseryHierarchies(t *testing.T) {
	checkHierarchies(t, nursery, nurseryHierarchies, "form")
}

// TestNurseryLD is LD against PPGEN on Nursery, the dataset of the
// paper's Figure 7 (PGEN_FIGURES=1, NURSERY_DATA; ld).
func TestNurseryLD(t *testing.T) { ld(t, nursery, nurseryHierarchies) }
