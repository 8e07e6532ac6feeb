package runner

import "github.com/cohortdm/cohort/api"

// API is the part of the record the node's HTTP API serves. The API
// declares its own record so that its clients build without this runtime;
// the conversion sits beside JobRecord so that a field added here is seen
// to need a decision there (TestAPIRecordKeepsTheJSON checks the two agree).
func (j *JobRecord) API() *api.JobRecord {
	r := &api.JobRecord{ID: j.ID, Kind: j.Kind, Status: j.Status, Submitted: j.Submitted, Finished: j.Finished,
		Error: j.Error, Failures: j.Failures, DroppedSteps: j.DroppedSteps}
	if s := j.Submission; s != nil {
		r.Submission = &api.Submission{Member: s.Member, Time: s.Time}
	}
	if j.Steps != nil { // a record with no steps shows "steps": [], a nil list null
		r.Steps = make([]*api.StepRecord, len(j.Steps))
	}
	for i, s := range j.Steps {
		if s != nil {
			r.Steps[i] = &api.StepRecord{Phase: s.Phase, Round: s.Round, Attempt: s.Attempt,
				Started: s.Started, Finished: s.Finished, Done: s.Done, Failed: s.Failed}
		}
	}
	return r
}
