package boost

import (
	"github.com/cohortdm/cohort/job"
)

// Params are the boosting parameters of a spec (params:), over the
// defaults of DefaultParams.
type Params struct {
	// Trees is the number of boosting rounds.
	Trees int `yaml:"trees"`
	// MaxDepth: a node at this depth (the root has depth 0) is a leaf.
	MaxDepth int `yaml:"max_depth"`
	// LearningRate multiplies every leaf weight (XGBoost's eta).
	LearningRate float64 `yaml:"learning_rate"`
	// Bins is the number of quantile bins per numeric column.
	Bins int `yaml:"bins"`
	// Lambda is the L2 penalty on leaf weights.
	Lambda float64 `yaml:"lambda"`
	// MinChildWeight: a split is taken only if both children's hessian
	// sums are at least this.
	MinChildWeight float64 `yaml:"min_child_weight"`
	// Loss is "logistic" (binary classification) or "squared".
	Loss string `yaml:"loss"`
	// Release puts the split thresholds in result.json; without it every
	// party keeps its own predicates (and the class holder the weights).
	Release bool `yaml:"release"`
	// PSI is the protocol of each edge's private set intersection in the
	// job: "auto" (the default), "ot", "vole" or "ecdh", as sjc's
	// params.psi.
	PSI string `yaml:"psi"`
	// Reuse: the class holder encrypts the gradients once per tree and the
	// receivers re-use the ciphertexts at the tree's deeper levels, which
	// tells them the open node of their entries (reuse.go; on the lattice
	// path lattice_reuse.go); false keeps the nodes hidden and encrypts
	// every entry at every level.
	Reuse bool `yaml:"reuse"`
	// Backend is how the bin sums of the other parties' tables are
	// computed: "paillier" (the default: additions of packed threshold
	// Paillier ciphertexts), "lattice" (plaintext products under the
	// consortium's lattice key; stars only, lattice.go and
	// lattice_job.go) or "auto" (lattice for a star when every party
	// holds the lattice key, else Paillier; decided at the load step).
	Backend string `yaml:"backend"`
	// TimeoutMS is the timeout of each step of the job (the node's default
	// when 0).
	TimeoutMS int64 `yaml:"timeout_ms"`
}

// Loss functions.
const (
	LossLogistic = "logistic"
	LossSquared  = "squared"
)

// Backends of params.backend.
const (
	BackendPaillier = "paillier"
	BackendLattice  = "lattice"
	BackendAuto     = "auto"
)

// DefaultParams are XGBoost's defaults where it has them: 10 trees of
// depth 3, learning rate 0.3, 32 bins, λ = 1, min_child_weight 1,
// logistic loss; gradient ciphertexts re-used within a tree; Paillier.
func DefaultParams() Params {
	return Params{Trees: 10, MaxDepth: 3, LearningRate: 0.3, Bins: 32, Lambda: 1, MinChildWeight: 1, Loss: LossLogistic, Reuse: true,
		Backend: BackendPaillier}
}

// ParseParams reads a spec's params over the defaults, refusing unknown
// fields and out-of-range values with an error naming the field.
func ParseParams(spec *job.Spec) (Params, error) {
	p := DefaultParams()
	if err := spec.DecodeParams(&p); err != nil {
		return p, err
	}
	field, why := p.Check()
	if field != "" {
		return p, spec.Errorf("params."+field, "%s", why)
	}
	return p, nil
}

// Check returns the first out-of-range parameter and why, or "".
func (p Params) Check() (field, why string) {
	switch {
	case p.Trees < 1 || p.Trees > 1000:
		return "trees", "must be in [1, 1000]"
	case p.MaxDepth < 1 || p.MaxDepth > 16:
		return "max_depth", "must be in [1, 16]"
	case !(p.LearningRate > 0 && p.LearningRate <= 1):
		return "learning_rate", "must be in (0, 1]"
	case p.Bins < 2 || p.Bins > 1024:
		return "bins", "must be in [2, 1024]"
	case !(p.Lambda >= 0 && p.Lambda <= 1e6):
		return "lambda", "must be in [0, 1e6]"
	case !(p.MinChildWeight >= 0 && p.MinChildWeight <= 1e9):
		return "min_child_weight", "must be in [0, 1e9]"
	case p.Loss != LossLogistic && p.Loss != LossSquared:
		return "loss", "must be logistic or squared"
	case p.Backend != BackendPaillier && p.Backend != BackendLattice && p.Backend != BackendAuto:
		return "backend", "must be paillier, lattice or auto"
	}
	return "", ""
}
