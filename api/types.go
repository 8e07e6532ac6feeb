// Package api is a Cohort node's HTTP API as a Go program sees it: the
// types the node answers with (Status, JobStatus, ConsortiumStatus) and a
// Client that talks to a node over its control socket or its HTTP
// listener. The cohort CLI is one such program; an organisation's own
// tools can be others, so the package imports nothing else of Cohort: a
// tool builds without the node's runtime and its table drivers. Start
// with Client.
package api

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Status is the JSON of /status.
type Status struct {
	Name      string   `json:"name"`
	PeerID    string   `json:"peer_id"`
	Addrs     []string `json:"addrs"`
	RaftState string   `json:"raft_state"`
	Leader    string   `json:"leader"`
	Members   []string `json:"members"`
	// Voters are the members that vote in Raft; the others are non-voting replicas.
	Voters  []string `json:"voters"`
	Jobs    int      `json:"jobs"`
	Running int      `json:"running"`
	// Memory is the node process's resident memory, where the system
	// reports it (Linux).
	Memory *Memory `json:"memory,omitempty"`
}

// Memory is a node process's resident memory in bytes: now, its peak
// since it started, and per job kind the highest sampled while a job of
// that kind ran on the node (every quarter second). Nodes sharing one
// process (cohort sim) report the same process.
type Memory struct {
	RSS      uint64            `json:"rss"`
	PeakRSS  uint64            `json:"peak_rss"`
	PeakJobs map[string]uint64 `json:"peak_rss_by_kind,omitempty"`
}

// Job statuses. The first three are the log's (package job/runner has the
// same values); the API shows a running job as queued or awaiting when it
// is one.
const (
	StatusRunning = "running"
	StatusDone    = "done"
	StatusFailed  = "failed"
	// StatusQueued is a running job whose first step has not started yet.
	StatusQueued = "queued"
	// StatusAwaiting is a running job that waits for some parties'
	// approval (Waiting names them).
	StatusAwaiting = "awaiting-approval"
)

// JobStatus is one job as the API reports it.
type JobStatus struct {
	*JobRecord
	Progress *Progress `json:"progress,omitempty"`
	// Queue is a queued job's place among the jobs waiting to start (1 is next).
	Queue int `json:"queue,omitempty"`
	// Waiting names the parties whose approval the job awaits.
	Waiting []string `json:"waiting,omitempty"`
}

// JobRecord is the part of a job's replicated record the API serves. It is
// declared here, not taken from the runtime, so that a client of the API
// builds without the node's runtime and its table drivers; the node fills
// it from its log's record. The spec, seed and step arguments stay in the
// log; the result has its own call (Client.Result).
type JobRecord struct {
	ID         string            `json:"id"`
	Kind       string            `json:"kind"`
	Submission *Submission       `json:"submission,omitempty"`
	Status     string            `json:"status"`
	Submitted  time.Time         `json:"submitted"`
	Finished   time.Time         `json:"finished,omitzero"`
	Steps      []*StepRecord     `json:"steps"`
	Error      string            `json:"error,omitempty"`
	Failures   map[string]string `json:"failures,omitempty"`
	// DroppedSteps counts the step summaries compaction removed.
	DroppedSteps int `json:"dropped_steps,omitempty"`
}

// StepRecord is the latest attempt of one step of a job.
type StepRecord struct {
	Phase    string    `json:"phase"`
	Round    int       `json:"round"`
	Attempt  int       `json:"attempt"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished,omitzero"`
	Done     bool      `json:"done"`
	Failed   []string  `json:"failed,omitempty"`
}

// Submission says which member submitted a job, and when.
type Submission struct {
	Member string    `json:"member"`
	Time   time.Time `json:"time"`
}

// Progress is the coordinator's latest report on a running phase.
type Progress struct {
	Phase string `json:"phase"`
	Done  int    `json:"done"`
	Total int    `json:"total"`
}

// Member is one organisation in the consortium.
type Member struct {
	Name   string   `yaml:"name" json:"name"`
	PeerID string   `yaml:"peer_id" json:"peer_id"`
	Addrs  []string `yaml:"addrs" json:"addrs"`
}

// ConsortiumStatus is the JSON of /v1/consortium: the members as the log
// has them, and which of them vote in Raft.
type ConsortiumStatus struct {
	Members []Member `json:"members"`
	Voters  []string `json:"voters"`
}

// DescribeFailures lists each failing party of a failed job with its
// causes, one indented line each.
func DescribeFailures(f map[string]string) string {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(f)) {
		fmt.Fprintf(&b, "  %s: %s\n", p, f[p])
	}
	return b.String()
}
