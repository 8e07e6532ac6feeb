package node

import (
	"os"
	"path/filepath"
)

// JobScratchDir is where a party keeps what one job needs across its
// steps and restarts (job.Secrets names under "jobs/JOBID/", such as
// sjc's training state): the node removes a job's directory once the
// job has ended in the log (done, failed or cancelled), whether the
// party's session closed normally or the node was down at the time.
// What must outlast the job (a model, a key) lives elsewhere.
const JobScratchDir = "jobs"

// removeScratch removes the scratch directory of an ended job.
func (r *jobRunner) removeScratch(id string) {
	if !filepath.IsLocal(id) || filepath.Base(id) != id {
		return
	}
	dir := filepath.Join(r.DataDir, JobScratchDir, id)
	if err := os.RemoveAll(dir); err != nil {
		r.Log.Warn("could not remove an ended job's scratch", "job", id, "dir", dir, "err", err)
	}
}

// sweepScratch removes the scratch directories of jobs that ended while
// this node was down (or before it could remove them): those the log
// records as done or failed. Directories of jobs it does not know are
// left alone.
func (r *jobRunner) sweepScratch() {
	entries, err := os.ReadDir(filepath.Join(r.DataDir, JobScratchDir))
	if err != nil {
		return // none yet
	}
	for _, e := range entries {
		if st, ok := r.FSM.jobs.Status(e.Name()); ok && st != StatusRunning {
			r.removeScratch(e.Name())
		}
	}
}
