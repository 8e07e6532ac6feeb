package publish

import (
	"fmt"
	"math"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/cohortdm/cohort/coherence"
	"github.com/cohortdm/cohort/job"
)

// Params are the job's params (see the package doc).
type Params struct {
	H              *float64 `yaml:"h"`
	K              int      `yaml:"k"`
	P              power    `yaml:"p"`
	Utility        string   `yaml:"utility"`
	Algorithm      string   `yaml:"algorithm"`
	KNugget        float64  `yaml:"k_nugget"`
	PNugget        power    `yaml:"p_nugget"`
	Private        []string `yaml:"private"`
	PrivateRule    string   `yaml:"private_rule"`
	Public         []string `yaml:"public"`
	PublicFraction *float64 `yaml:"public_fraction"`
	Seed           uint64   `yaml:"seed"`
	TimeoutMS      int64    `yaml:"timeout_ms"`
}

// power is p or p': a positive integer, or inf for no bound (-1); 0 when
// not given.
type power int

// UnmarshalYAML reads a positive integer or inf.
func (p *power) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.ScalarNode {
		switch strings.ToLower(n.Value) {
		case "inf", ".inf", "∞":
			*p = -1
			return nil
		}
	}
	var v int
	if err := n.Decode(&v); err != nil {
		return err
	}
	if v < 1 {
		return fmt.Errorf("not positive")
	}
	*p = power(v)
	return nil
}

// bound is the library's length bound: 0 for none.
func (p power) bound() int { return max(int(p), 0) }

func parseParams(spec *job.Spec) (*Params, error) {
	prm := &Params{Utility: "item", Algorithm: "greedy"}
	if err := spec.DecodeParams(prm); err != nil {
		return nil, err
	}
	if len(spec.Parties) != 1 || len(spec.Parties[0].Tables) != 1 {
		return nil, spec.Errorf("parties", "coherence runs on one party with one table of transactions")
	}
	switch {
	case prm.H == nil:
		return nil, spec.Errorf("params.h", "missing: give the bound on the breach probability, in (0, 1]")
	case !(*prm.H > 0 && *prm.H <= 1):
		return nil, spec.Errorf("params.h", "must be in (0, 1], not %v", *prm.H)
	case prm.K == 0:
		return nil, spec.Errorf("params.k", "missing: give the least cohort size, at least 2")
	case prm.K < 2:
		return nil, spec.Errorf("params.k", "must be at least 2, not %d", prm.K)
	case prm.P == 0:
		return nil, spec.Errorf("params.p", "missing: give the attacker's power, a positive integer or inf")
	case prm.Utility != "item" && prm.Utility != "itemset":
		return nil, spec.Errorf("params.utility", "must be item or itemset, not %q", prm.Utility)
	case prm.Algorithm != "greedy" && prm.Algorithm != "rmall" && prm.Algorithm != "k-anonymizer":
		return nil, spec.Errorf("params.algorithm", "must be greedy, rmall or k-anonymizer, not %q", prm.Algorithm)
	case prm.Utility == "itemset" && prm.KNugget == 0:
		return nil, spec.Errorf("params.k_nugget", "missing: itemset utility needs the nuggets' least support, a count of at least 2 or a fraction in (0, 1)")
	case prm.KNugget < 0 || prm.KNugget >= 1 && (prm.KNugget < 2 || prm.KNugget != math.Trunc(prm.KNugget)):
		return nil, spec.Errorf("params.k_nugget", "must be a count of at least 2 or a fraction in (0, 1), not %v", prm.KNugget)
	case prm.PNugget != 0 && prm.KNugget == 0:
		return nil, spec.Errorf("params.p_nugget", "needs params.k_nugget")
	case prm.PrivateRule != "" && prm.PrivateRule != "thesis":
		return nil, spec.Errorf("params.private_rule", "must be thesis, not %q", prm.PrivateRule)
	case prm.PrivateRule != "" && len(prm.Private) > 0:
		return nil, spec.Errorf("params.private_rule", "give private items or private_rule, not both")
	case prm.PublicFraction != nil && len(prm.Public) > 0:
		return nil, spec.Errorf("params.public_fraction", "give public items or public_fraction, not both")
	case prm.PublicFraction != nil && !(*prm.PublicFraction > 0 && *prm.PublicFraction <= 1):
		return nil, spec.Errorf("params.public_fraction", "must be in (0, 1], not %v", *prm.PublicFraction)
	case prm.Seed != 0 && prm.PublicFraction == nil:
		return nil, spec.Errorf("params.seed", "draws the public items: it needs params.public_fraction")
	}
	if err := spec.CheckTimeoutMS(prm.TimeoutMS); err != nil {
		return nil, err
	}
	for i, l := range prm.Private {
		if l == "" {
			return nil, spec.Errorf(fmt.Sprintf("params.private[%d]", i), "is empty")
		}
	}
	private := make(map[string]bool, len(prm.Private))
	for _, l := range prm.Private {
		private[l] = true
	}
	for i, l := range prm.Public {
		switch {
		case l == "":
			return nil, spec.Errorf(fmt.Sprintf("params.public[%d]", i), "is empty")
		case private[l]:
			return nil, spec.Errorf(fmt.Sprintf("params.public[%d]", i), "is also in params.private")
		}
	}
	return prm, nil
}

// privacy is the library's form of h, k and p.
func (prm *Params) privacy() coherence.Params {
	return coherence.Params{H: *prm.H, K: prm.K, P: prm.P.bound()}
}

// roles is the library's form of the role params, a draw of public items
// seeded with draw (drawSeed: params.seed mixed with the joint seed).
func (prm *Params) roles(draw uint64) coherence.RoleSpec {
	r := coherence.RoleSpec{Private: prm.Private, ThesisRule: prm.PrivateRule == "thesis", Public: prm.Public, Seed: draw}
	if prm.PublicFraction != nil {
		r.PublicFraction = *prm.PublicFraction
	}
	return r
}

// nuggets is the library's form of k' and p' for a database of n
// transactions, and whether they were given.
func (prm *Params) nuggets(n int) (coherence.Nuggets, bool) {
	if prm.KNugget == 0 {
		return coherence.Nuggets{}, false
	}
	k := int(prm.KNugget)
	if prm.KNugget < 1 {
		k = max(2, int(math.Ceil(prm.KNugget*float64(n))))
	}
	return coherence.Nuggets{K: k, P: prm.PNugget.bound()}, true
}

// algorithm names what runs.
func (prm *Params) algorithm() string {
	switch {
	case prm.Algorithm == "rmall" || prm.Algorithm == "k-anonymizer":
		return prm.Algorithm
	case prm.Utility == "itemset":
		return "border-cohesion"
	}
	return "tree-cohesion"
}
