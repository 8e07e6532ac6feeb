package policy

import (
	"fmt"
	"maps"
	"slices"

	"github.com/cohortdm/cohort/job"
)

// Synthetic releases. A kind that publishes a synthetic sample of a
// dataset (kde) draws it afresh in every job: each job adds independent
// draws of the same rows, and enough of them rebuild the density the
// sample only approximates, and from its sharp edges the rows. A kind
// that publishes an anonymised model of the rows (pgen's tree, each path
// at least release_k rows) publishes other paths under other params, and
// paths of two trees intersect into fewer rows than either holds. The
// policy bounds how many such releases of one dataset the jobs publish,
// samples and trees together (synthetic_releases); a job counts once,
// whatever its re-runs.

// DefaultSyntheticReleases is the allowance of synthetic releases per
// dataset of a policy file that names none.
const DefaultSyntheticReleases = 5

// Synthetic refuses a synthetic release of a table (by the spec's name:
// a sample, a published tree) past its dataset's allowance of synthetic
// releases; otherwise it counts the job's release of the dataset, once
// per job.
func (g *Guard) Synthetic(step job.Step, table string) error {
	p, err := g.policy()
	if err != nil {
		return err
	}
	dataset, err := g.dataset(p, table)
	if err != nil {
		return err
	}
	ok, err := g.e.store.synthetic(g.job, dataset, p.SyntheticReleases)
	if err != nil {
		return fmt.Errorf("%s: record the synthetic release: %w", g.e.self, err)
	}
	if !ok {
		return g.refusal(refuse("synthetic_releases", "a synthetic release of %s at step %s/%d would exceed this node's allowance of synthetic releases", table, step.Phase, step.Round))
	}
	return nil
}

// synthetic counts a job's synthetic release of a dataset if the
// allowance holds it (a job that released the dataset already counts no
// more); it reports whether the release may go.
func (s *Store) synthetic(jobID, dataset string, allowance int) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	ok, counted := s.applySynthetic(jobID, dataset, allowance)
	if !counted {
		return ok, nil // refused, or the job's release counted before: nothing to journal
	}
	return true, s.persist(entry{Op: opSynthetic, Job: jobID, Dataset: dataset, Allowance: allowance})
}

// applySynthetic counts the job's release of the dataset unless it is
// counted already (ok, not counted) or past the allowance (not ok).
func (s *Store) applySynthetic(jobID, dataset string, allowance int) (ok, counted bool) {
	if s.releasedSynthetic(jobID, dataset) {
		return true, false
	}
	if s.st.Synthetic[dataset]+1 > allowance {
		return false, false
	}
	s.st.Synthetic[dataset]++
	s.st.JobSynthetic = append(s.st.JobSynthetic, JobRelease{Job: jobID, Dataset: dataset})
	if n := len(s.st.JobSynthetic); n > maxJobSpends {
		s.st.JobSynthetic = slices.Clone(s.st.JobSynthetic[n-maxJobSpends:])
	}
	return true, true
}

// syntheticMade is a copy of the synthetic releases counted per dataset.
func (s *Store) syntheticMade() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.st.Synthetic)
}

// releasedSynthetic reports whether the job has a synthetic release of the
// dataset counted; s.mu is held.
func (s *Store) releasedSynthetic(jobID, dataset string) bool {
	return slices.Contains(s.st.JobSynthetic, JobRelease{Job: jobID, Dataset: dataset})
}
