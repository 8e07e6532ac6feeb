package runner

import (
	"time"

	"github.com/cohortdm/cohort/job"
)

// Operations of the log: what a coordinator commits about jobs.
const (
	OpSubmit = "submit" // a job spec was accepted, with the job's seed
	OpStart  = "start"  // the coordinator started an attempt of a step
	OpDone   = "done"   // a step's public record
	OpFinish = "finish" // the job's result
	OpFail   = "fail"   // the job failed
	OpCancel = "cancel" // a member cancelled the job
)

// Entry is one job entry of the replicated log. Whoever commits it stamps
// Time, so every member replays identical timestamps. Nothing in it is
// private to one member: the log reaches every member.
type Entry struct {
	Op   string    `msgpack:"op"`
	Time time.Time `msgpack:"time"`
	Job  string    `msgpack:"job"`
	Spec []byte    `msgpack:"spec,omitempty"`
	Seed []byte    `msgpack:"seed,omitempty"`
	// Submission is who submitted the job and their signature over it
	// (OpSubmit), so that every party can check who asked.
	Submission *Submission `msgpack:"submission,omitempty"`
	Step       *job.Step   `msgpack:"step,omitempty"`
	Record     *job.Record `msgpack:"record,omitempty"`
	Result     []byte      `msgpack:"result,omitempty"`
	Error      string      `msgpack:"error,omitempty"`
	// Failures names each failing party of a failed job and its causes
	// over every attempt.
	Failures map[string]string `msgpack:"failures,omitempty"`
}

// Submission says which member submitted a job. Nonce and Time make each
// submission distinct; Signature is the submitter's signature over the
// spec, nonce and time (see SubmissionDigest), made with its node identity
// so that a coordinator cannot claim a job came from someone else.
type Submission struct {
	Member    string    `msgpack:"member" json:"member"`
	Nonce     []byte    `msgpack:"nonce" json:"-"`
	Time      time.Time `msgpack:"time" json:"time"`
	Signature []byte    `msgpack:"signature" json:"-"`
}
