// Package api is a Cohort node's HTTP API as a Go program sees it: the
// types the node answers with (Status, JobStatus, ConsortiumStatus) and a
// Client that talks to a node over its control socket or its HTTP
// listener. The cohort CLI is one such program; an organisation's own
// tools can be others. Start with Client.
package api

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/job/runner"
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
}

// Job statuses the API shows besides the log's (runner.StatusRunning,
// StatusDone, StatusFailed).
const (
	// StatusQueued is a running job whose first step has not started yet.
	StatusQueued = "queued"
	// StatusAwaiting is a running job that waits for some parties'
	// approval (Waiting names them).
	StatusAwaiting = "awaiting-approval"
)

// JobStatus is one job as the API reports it.
type JobStatus struct {
	*runner.JobRecord
	Progress *Progress `json:"progress,omitempty"`
	// Queue is a queued job's place among the jobs waiting to start (1 is next).
	Queue int `json:"queue,omitempty"`
	// Waiting names the parties whose approval the job awaits.
	Waiting []string `json:"waiting,omitempty"`
}

// JobSummary is one job as a list counts and filters it (its id, kind,
// replicated status and end), without its record.
type JobSummary = runner.JobSummary

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
