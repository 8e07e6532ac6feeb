package secureagg

import (
	"math"

	"github.com/cohortdm/cohort/job"
)

// NoiseSpec is a spec's params.noise, as every kind that noises a secure
// aggregate reads it (sum, quantile): the mechanism and the budget one job
// spends, and how many colluders the noise must survive. Each kind says
// what the sensitivity is; Check keeps a spec from asking for a noise
// Noise.plan would refuse only once the job runs.
type NoiseSpec struct {
	Mechanism string  `yaml:"mechanism"`
	Epsilon   float64 `yaml:"epsilon"`
	Delta     float64 `yaml:"delta"`
	// Sensitivity is how far one row can move the aggregate, for the
	// kinds whose spec states it (sum); each node requires it to be at
	// least what its own bounds give.
	Sensitivity float64 `yaml:"sensitivity"`
	// Colluders is how many parties' noise shares an adversary may know
	// (default: the key's threshold t). The noise is sized so that the
	// others' shares alone are the full noise.
	Colluders *int `yaml:"colluders"`
}

// Check validates n against spec, naming the field at fault.
func (n *NoiseSpec) Check(spec *job.Spec) error {
	m := Mechanism(n.Mechanism)
	if m != Laplace && m != Gaussian {
		return spec.Errorf("params.noise.mechanism", "must be laplace or gaussian, not %q", n.Mechanism)
	}
	if !(n.Epsilon > 0) || math.IsInf(n.Epsilon, 0) {
		return spec.Errorf("params.noise.epsilon", "must be a finite number > 0")
	}
	switch {
	case m == Laplace && n.Delta != 0:
		return spec.Errorf("params.noise.delta", "laplace noise takes no delta (it is ε-DP)")
	case m == Gaussian && !(n.Delta > 0 && n.Delta < 1):
		return spec.Errorf("params.noise.delta", "gaussian noise needs a delta in (0, 1)")
	}
	if n.Sensitivity < 0 || math.IsNaN(n.Sensitivity) || math.IsInf(n.Sensitivity, 0) {
		return spec.Errorf("params.noise.sensitivity", "must be a finite number ≥ 0")
	}
	if n.Colluders != nil && (*n.Colluders < 0 || *n.Colluders >= len(spec.Parties)) {
		return spec.Errorf("params.noise.colluders", "must be in [0, %d], fewer than the parties", len(spec.Parties)-1)
	}
	return nil
}

// Noise is the noise each party adds for one aggregate that spends the
// whole of n's budget, sized for the colluders n states, or for the key's
// threshold t. A kind that splits the budget over several aggregates
// scales the copy it gets.
func (n *NoiseSpec) Noise(t int) *Noise {
	colluders := t
	if n.Colluders != nil {
		colluders = *n.Colluders
	}
	return &Noise{Mechanism: Mechanism(n.Mechanism), Epsilon: n.Epsilon, Delta: n.Delta,
		Sensitivity: n.Sensitivity, Colluders: colluders}
}
