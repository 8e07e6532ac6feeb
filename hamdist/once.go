package hamdist

import (
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
)

// CheckOnce is how a party of a one-step comparison job (hamming,
// model-select) refuses any step but round 0 of phase, and that step too
// once the log holds it committed: the spec fixes every input, so a
// re-run after a failure compares the same columns, and a committed
// answer is never computed twice. done is the phase's records (the
// round's History).
func CheckOnce(kind, self string, step job.Step, phase, what string, done []*job.Record) error {
	if step.Phase != phase || step.Round != 0 {
		return fmt.Errorf("%s: party %s refuses step %s/%d of coordinator %s: %s has one step, %s round 0",
			kind, self, step.Phase, step.Round, step.Coordinator, kind, phase)
	}
	if slices.ContainsFunc(done, func(r *job.Record) bool { return r.Error == "" }) {
		return fmt.Errorf("%s: party %s refuses coordinator %s: the log holds the %s already", kind, self, step.Coordinator, what)
	}
	return nil
}
