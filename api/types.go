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
	"math"
	"net/url"
	"slices"
	"strconv"
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
	// Randomizers is the node's pool of Paillier encryption randomisers,
	// when it keeps one (node.yaml randomizer_pool) for an installed key.
	Randomizers *Randomizers `json:"randomizers,omitempty"`
	// LatticeZeros is the node's pool of lattice encryptions of zero, when
	// it keeps one (node.yaml lattice_pool) for an installed lattice key,
	// counted as Randomizers are.
	LatticeZeros *Randomizers `json:"lattice_zeros,omitempty"`
}

// Randomizers describes a node's pool of precomputed Paillier encryption
// randomisers: its bound, how many are ready and the memory they hold,
// and, since the node started, how many encryptions took one and how many
// found the pool empty and computed their own.
type Randomizers struct {
	Size     int   `json:"size"`
	Ready    int   `json:"ready"`
	Bytes    int   `json:"bytes"`
	Taken    int64 `json:"taken"`
	Computed int64 `json:"computed"`
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

// JobQuery asks GET /v1/jobs for one page of jobs: those of Kind and
// Status ("" for any; StatusRunning includes the queued and the
// awaiting), the running first in submission order, then the finished
// newest first, skipping Offset of them and at most Limit (0: the
// default page, DefaultJobPage; at most MaxJobPage).
type JobQuery struct {
	Kind   string
	Status string
	Offset int
	Limit  int
}

// Page sizes of GET /v1/jobs.
const (
	DefaultJobPage = 100
	MaxJobPage     = 1000
)

// Values are q as the query string of GET /v1/jobs.
func (q JobQuery) Values() url.Values {
	v := url.Values{}
	if q.Kind != "" {
		v.Set("kind", q.Kind)
	}
	if q.Status != "" {
		v.Set("status", q.Status)
	}
	if q.Offset != 0 {
		v.Set("offset", strconv.Itoa(q.Offset))
	}
	if q.Limit != 0 {
		v.Set("limit", strconv.Itoa(q.Limit))
	}
	return v
}

// ParseJobQuery reads a JobQuery from GET /v1/jobs's query string,
// refusing an unknown status, a negative offset or a limit outside
// 1..MaxJobPage; a missing limit is DefaultJobPage.
func ParseJobQuery(v url.Values) (JobQuery, error) {
	q := JobQuery{Kind: v.Get("kind"), Status: v.Get("status"), Limit: DefaultJobPage}
	switch q.Status {
	case "", StatusRunning, StatusDone, StatusFailed:
	default:
		return q, fmt.Errorf("status %q: want %s, %s or %s (a queued or awaiting job is %s)", q.Status, StatusRunning, StatusDone, StatusFailed, StatusRunning)
	}
	for _, f := range []struct {
		name     string
		to       *int
		min, max int
	}{{"offset", &q.Offset, 0, math.MaxInt}, {"limit", &q.Limit, 1, MaxJobPage}} {
		s := v.Get(f.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < f.min || n > f.max {
			return q, fmt.Errorf("%s %q: want a whole number from %d to %d", f.name, s, f.min, f.max)
		}
		*f.to = n
	}
	return q, nil
}

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
