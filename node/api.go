package node

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/cohortdm/cohort/api"
	"github.com/cohortdm/cohort/console"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
)

// SocketName is the control socket in a node's data dir; the CLI's job
// commands talk to the node through it.
const SocketName = "cohort.sock"

// MaxSpecBytes is the largest job spec the job API accepts; a larger body is
// refused with 413 rather than cut short.
const MaxSpecBytes = 1 << 20

// Status, JobStatus and ConsortiumStatus are the API's answers (package
// api, which also has a client).
type (
	Status           = api.Status
	JobStatus        = api.JobStatus
	ConsortiumStatus = api.ConsortiumStatus
	Progress         = api.Progress
)

// StatusAwaiting is how the API shows a running job that waits for some
// parties' approval.
const StatusAwaiting = api.StatusAwaiting

// Status reports the node's state.
func (n *Node) Status() Status {
	st := Status{Name: n.cfg.Name, PeerID: n.mesh.host.ID().String(), Addrs: n.Addrs(), Leader: n.Leader()}
	if n.consensus != nil {
		st.RaftState = n.consensus.raft.State().String()
	}
	if cons := n.mesh.members(); cons != nil {
		st.Members = cons.Names()
	}
	st.Voters = n.RaftVoters()
	st.Jobs, st.Running = n.fsm.jobs.Counts()
	if rss, peak, ok := processMemory(); ok {
		st.Memory = &api.Memory{RSS: rss, PeakRSS: peak, PeakJobs: n.memory.peaks()}
	}
	if p, ok := n.pools.stats(); ok {
		st.Randomizers = &api.Randomizers{Size: p.Size, Ready: p.Ready, Bytes: p.Bytes, Taken: p.Taken, Computed: p.Computed}
	}
	if z, ok := latticeZeroStats(n.pools.zeros); ok {
		st.LatticeZeros = &api.Randomizers{Size: z.Size, Ready: z.Ready, Bytes: z.Bytes, Taken: z.Taken, Computed: z.Computed}
	}
	return st
}

// Job returns one job's replicated state.
func (n *Node) Job(id string) (*JobStatus, bool) {
	j, ok := n.fsm.jobs.Job(id)
	if !ok {
		return nil, false
	}
	return n.status(j), true
}

// status is the API's view of a copy of a job's record: its queue
// position, the parties it awaits and its progress. A queued job is not
// also shown awaiting, and only a job shown running has progress.
func (n *Node) status(j *JobRecord) *JobStatus {
	js := &JobStatus{JobRecord: j.API()}
	if js.Status == StatusRunning && len(j.Steps) == 0 {
		js.Status, js.Queue = StatusQueued, n.fsm.jobs.QueuePosition(j.ID)
	}
	if js.Status == StatusRunning {
		if w := awaitedParties(j); len(w) > 0 {
			js.Status, js.Waiting = StatusAwaiting, w
		}
	}
	if p, ok := n.progress.get(j.ID); ok && js.Status == StatusRunning {
		js.Progress = &p
	}
	return js
}

// Jobs lists one page of jobs (api.JobQuery: the running first, in
// submission order, then the finished, newest first), copying only the
// records of that page; a limit of 0 is the default page.
func (n *Node) Jobs(q api.JobQuery) []*JobStatus {
	if q.Limit == 0 {
		q.Limit = api.DefaultJobPage
	}
	jobs := n.fsm.jobs.Page(q.Kind, q.Status, q.Offset, q.Limit)
	out := make([]*JobStatus, 0, len(jobs))
	for _, j := range jobs {
		out = append(out, n.status(j))
	}
	return out
}

// JobKinds, FinishedJobs, FinishedCounts and RunningJobs are the paged
// accessors a list of jobs reads: counts and one page of ids from the
// state's index, never a walk over every job, and then Job for the rows
// it shows (runner.State).
func (n *Node) JobKinds() []string                        { return n.fsm.jobs.Kinds() }
func (n *Node) FinishedCounts(kind string) map[string]int { return n.fsm.jobs.FinishedCounts(kind) }
func (n *Node) RunningJobs(kind string) []string          { return n.fsm.jobs.RunningOf(kind) }
func (n *Node) FinishedJobs(kind, status string, offset, limit int) []string {
	return n.fsm.jobs.Finished(kind, status, offset, limit)
}

// Wait blocks until the job is done or failed and returns its record. It
// wakes at each change of the jobs' state, not on a timer: a waiter hears
// of the end as soon as the entry is applied.
func (n *Node) Wait(ctx context.Context, id string) (*JobRecord, error) {
	for {
		changed := n.fsm.jobs.Watch() // before the read, so that no change falls between
		if j, ok := n.fsm.jobs.Job(id); ok && j.Status != StatusRunning {
			return j, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting for job %s: %w", id, ctx.Err())
		case <-changed:
		}
	}
}

// Handler returns the node's HTTP API: /status, /metrics and the job API
// under /v1/jobs. The node serves it on its control socket and on the
// optional HTTP listener. Every request but GET /metrics must carry the
// node's bearer token (APIToken, DATA_DIR/api.token), except the web
// console under /console/, whose operator signs in with that token.
func (n *Node) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle(console.Prefix, n.consoleHandler())
	mux.Handle("/", requireToken(n.token, n.routes()))
	return mux
}

func (n *Node) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /status", func(w http.ResponseWriter, r *http.Request) { writeJSON(w, http.StatusOK, n.Status()) })
	mux.Handle("GET /metrics", promhttp.HandlerFor(n.metrics.reg, promhttp.HandlerOpts{}))
	n.jobRoutes(mux)
	n.decisionRoutes(mux)
	n.consortiumRoutes(mux)
	return mux
}

// jobRoutes serves the job API: list, submit, status, cancel, result.
func (n *Node) jobRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		q, err := api.ParseJobQuery(r.URL.Query())
		if err != nil {
			writeError(w, http.StatusBadRequest, err)
			return
		}
		writeJSON(w, http.StatusOK, n.Jobs(q))
	})
	mux.HandleFunc("POST /v1/jobs", func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxSpecBytes))
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			writeError(w, http.StatusRequestEntityTooLarge,
				fmt.Errorf("job spec too large: the job API accepts at most %d MiB", MaxSpecBytes>>20))
			return
		case err != nil:
			writeError(w, http.StatusBadRequest, fmt.Errorf("read job spec: %w", err))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		id, err := n.Submit(ctx, b)
		if err != nil {
			code := http.StatusInternalServerError
			if errors.Is(err, job.ErrSpec) {
				code = http.StatusBadRequest
			}
			writeError(w, code, err)
			return
		}
		writeJSON(w, http.StatusCreated, map[string]string{"id": id})
	})
	mux.HandleFunc("GET /v1/jobs/{id}", func(w http.ResponseWriter, r *http.Request) {
		j, ok := n.Job(r.PathValue("id"))
		if !ok {
			writeError(w, http.StatusNotFound, fmt.Errorf("no job %q", r.PathValue("id")))
			return
		}
		writeJSON(w, http.StatusOK, j)
	})
	mux.HandleFunc("POST /v1/jobs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		id := r.PathValue("id")
		err := n.Cancel(ctx, id)
		switch {
		case err == nil:
			j, _ := n.Job(id)
			writeJSON(w, http.StatusOK, j)
		case errors.Is(err, ErrNotRunning):
			writeError(w, http.StatusConflict, err)
		case errors.Is(err, ErrNoJob):
			writeError(w, http.StatusNotFound, err)
		default:
			writeError(w, http.StatusInternalServerError, err)
		}
	})
	mux.HandleFunc("GET /v1/jobs/{id}/result", func(w http.ResponseWriter, r *http.Request) {
		j, ok := n.fsm.jobs.Job(r.PathValue("id"))
		switch {
		case !ok:
			writeError(w, http.StatusNotFound, fmt.Errorf("no job %q", r.PathValue("id")))
		case j.Status == StatusFailed:
			writeError(w, http.StatusConflict, fmt.Errorf("job %s failed: %s\n%s", j.ID, j.Error, strings.TrimRight(api.DescribeFailures(j.Failures), "\n")))
		case j.Status != StatusDone:
			writeError(w, http.StatusAccepted, fmt.Errorf("job %s is still %s", j.ID, j.Status))
		default:
			w.Header().Set("Content-Type", "application/json")
			w.Write(j.Result)
			if !bytes.HasSuffix(j.Result, []byte("\n")) {
				w.Write([]byte("\n")) // like every other answer, and like result.json on disk
			}
		}
	})
}

// decisionRoutes serves this organisation's approvals and its policy.
func (n *Node) decisionRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /v1/jobs/{id}/approve", func(w http.ResponseWriter, r *http.Request) {
		n.serveDecision(w, r, func(ctx context.Context, id string) error { return n.Approve(ctx, id) })
	})
	mux.HandleFunc("POST /v1/jobs/{id}/reject", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Reason string `json:"reason"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&body); err != nil || strings.TrimSpace(body.Reason) == "" {
			writeError(w, http.StatusBadRequest, fmt.Errorf("reject: want JSON {\"reason\": TEXT} with a reason"))
			return
		}
		n.serveDecision(w, r, func(ctx context.Context, id string) error { return n.Reject(ctx, id, body.Reason) })
	})
	mux.HandleFunc("GET /v1/policy", func(w http.ResponseWriter, r *http.Request) {
		show, err := n.policy.Show()
		if err != nil {
			writeError(w, http.StatusInternalServerError, err)
			return
		}
		writeJSON(w, http.StatusOK, show)
	})
}

// consortiumRoutes serves the membership API.
func (n *Node) consortiumRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /v1/consortium", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, ConsortiumStatus{Members: n.Consortium().Members, Voters: n.RaftVoters()})
	})
	mux.HandleFunc("POST /v1/consortium/members", func(w http.ResponseWriter, r *http.Request) {
		var m Member
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<16))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&m); err != nil {
			writeError(w, http.StatusBadRequest, fmt.Errorf("member: want JSON {name, peer_id, addrs} as 'cohort node init --format json' prints it: %w", err))
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		if err := n.AddMember(ctx, m); err != nil {
			writeMembershipError(w, err)
			return
		}
		writeJSON(w, http.StatusCreated, ConsortiumStatus{Members: n.Consortium().Members, Voters: n.RaftVoters()})
	})
	mux.HandleFunc("DELETE /v1/consortium/members/{name}", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
		defer cancel()
		if err := n.RemoveMember(ctx, r.PathValue("name")); err != nil {
			writeMembershipError(w, err)
			return
		}
		writeJSON(w, http.StatusOK, ConsortiumStatus{Members: n.Consortium().Members, Voters: n.RaftVoters()})
	})
	mux.HandleFunc("POST /v1/consortium/reload", func(w http.ResponseWriter, r *http.Request) {
		c, err := n.ReloadConsortium()
		switch {
		case errors.Is(err, ErrMembership):
			writeError(w, http.StatusConflict, err)
		case err != nil:
			writeError(w, http.StatusBadRequest, err)
		default:
			writeJSON(w, http.StatusOK, ConsortiumStatus{Members: c.Members, Voters: n.RaftVoters()})
		}
	})
}

// serveDecision answers an approval or rejection of a job by this node.
func (n *Node) serveDecision(w http.ResponseWriter, r *http.Request, decide func(ctx context.Context, id string) error) {
	ctx, cancel := context.WithTimeout(r.Context(), 30*time.Second)
	defer cancel()
	id := r.PathValue("id")
	switch err := decide(ctx, id); {
	case err == nil:
		j, _ := n.Job(id)
		writeJSON(w, http.StatusOK, j)
	case errors.Is(err, ErrNoJob):
		writeError(w, http.StatusNotFound, err)
	case errors.Is(err, ErrNotRunning), errors.Is(err, ErrNotAwaiting):
		writeError(w, http.StatusConflict, err)
	default:
		writeError(w, http.StatusInternalServerError, err)
	}
}

// awaitedParties returns the parties a running job waits for in an open
// round of its admit phase (those whose policy asks a person to approve).
func awaitedParties(j *JobRecord) []string {
	for i := len(j.Steps) - 1; i >= 0; i-- {
		s := j.Steps[i]
		if s.Phase == runner.AdmitPhase && s.Round > 0 && !s.Done {
			return s.Step.Parties
		}
	}
	return nil
}

func writeMembershipError(w http.ResponseWriter, err error) {
	code := http.StatusInternalServerError
	if errors.Is(err, ErrMembership) {
		code = http.StatusConflict
	}
	writeError(w, code, err)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"error": err.Error()})
}

// Party returns this node's view of the network for one job id, as job
// packages see it. Tools and benchmarks use it to exchange messages directly.
func (n *Node) Party(jobID string) job.Party { return netParty{n} }

// HTTPAddr returns the address of the optional HTTP listener as configured.
func (n *Node) HTTPAddr() string { return n.cfg.HTTP }
