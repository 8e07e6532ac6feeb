package node

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"github.com/libp2p/go-libp2p/core/network"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// outputType is the message a party sends the coordinator when it finishes a step.
const outputType = "job/output"

// stepOutput is the body of an output message.
type stepOutput struct {
	Output []byte `msgpack:"output"`
	Error  string `msgpack:"error"`
	Bytes  int64  `msgpack:"bytes"`
}

// reconcileLoop makes this node do what the log says: coordinate running
// jobs while it leads, and run the steps it takes part in.
func (n *Node) reconcileLoop() {
	defer n.wg.Done()
	obs := make(chan raft.Observation, 16)
	observer := raft.NewObserver(obs, false, func(o *raft.Observation) bool {
		_, ok := o.Data.(raft.RaftState)
		return ok
	})
	n.raft.RegisterObserver(observer)
	defer n.raft.DeregisterObserver(observer)
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	for {
		n.reconcile()
		select {
		case <-n.ctx.Done():
			n.stopAll()
			return
		case <-n.fsm.changed:
		case <-obs:
		case <-tick.C:
		}
	}
}

// coordination is one running Coordinate goroutine; it removes itself when
// it ends, so a node that loses and regains leadership resumes the job.
type coordination struct{ cancel context.CancelFunc }

func (n *Node) stopAll() {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, c := range n.coordinating {
		c.cancel()
	}
	for _, c := range n.participating {
		c()
	}
}

func (n *Node) reconcile() {
	state := n.raft.State()
	n.metrics.setRaftState(state.String())
	if state != n.lastState {
		n.log.Info("raft state changed", "from", n.lastState.String(), "to", state.String())
		n.lastState = state
	}
	leader := state == raft.Leader
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return
	}
	for _, j := range n.fsm.jobs() {
		co, coordinating := n.coordinating[j.ID]
		switch {
		case j.Status != StatusRunning:
			if n.cleaned[j.ID] {
				continue
			}
			if coordinating {
				co.cancel()
				delete(n.coordinating, j.ID)
			}
			for id, c := range n.participating {
				if id.job == j.ID {
					c()
					delete(n.participating, id)
				}
			}
			for id := range n.finished {
				if id.job == j.ID {
					delete(n.finished, id)
				}
			}
			delete(n.progress, j.ID)
			n.ms.box.drop(j.ID)
			n.cleaned[j.ID] = true
			continue
		case leader && !coordinating:
			ctx, cancel := context.WithCancel(n.ctx)
			co := &coordination{cancel: cancel}
			n.coordinating[j.ID] = co
			n.wg.Add(1)
			go func() {
				defer n.wg.Done()
				n.coordinate(ctx, j.ID)
				cancel()
				n.mu.Lock()
				if n.coordinating[j.ID] == co {
					delete(n.coordinating, j.ID)
				}
				n.mu.Unlock()
			}()
		case !leader && coordinating:
			co.cancel()
			delete(n.coordinating, j.ID)
		}
		for _, s := range j.Steps {
			id := stepID{j.ID, s.Phase, s.Round, s.Attempt}
			for old, c := range n.participating { // a newer attempt or a finished step supersedes
				if old.job == id.job && old.phase == id.phase && old.round == id.round && (old.attempt < id.attempt || s.Done()) {
					c()
					delete(n.participating, old)
				}
			}
			if s.Done() || n.finished[id] || !contains(s.Step.Parties, n.cfg.Name) {
				continue
			}
			if _, running := n.participating[id]; running {
				continue
			}
			ctx, cancel := context.WithCancel(n.ctx)
			n.participating[id] = cancel
			n.wg.Add(1)
			go n.participate(ctx, j, s.Step, id)
		}
	}
}

func contains(xs []string, x string) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// acceptMessage refuses messages that can no longer be received: for a
// finished job, or for an attempt older than the step's latest.
func (n *Node) acceptMessage(m *protocol.Message) error {
	j, ok := n.fsm.job(m.Job)
	if !ok {
		return nil // the job may not be applied here yet; it is dropped with the job later
	}
	if j.Status != StatusRunning {
		return fmt.Errorf("%w: job %s is %s", errStale, m.Job, j.Status)
	}
	if s := j.step(m.Phase, m.Round); s != nil && m.Attempt < s.Attempt {
		return fmt.Errorf("%w: attempt %d of step %s/%d superseded by %d", errStale, m.Attempt, m.Phase, m.Round, s.Attempt)
	}
	return nil
}

// party implements job.Party (and job.Participant) for one job on this node.
type party struct {
	n    *Node
	id   string
	spec *job.Spec
}

func (p *party) Self() string         { return p.n.cfg.Name }
func (p *party) JobID() string        { return p.id }
func (p *party) Spec() *job.Spec      { return p.spec }
func (p *party) Secrets() job.Secrets { return p.n.secrets }
func (p *party) Send(ctx context.Context, to string, m *protocol.Message, d protocol.Disclosure) error {
	return p.n.ms.send(ctx, to, m, d)
}
func (p *party) Receive(ctx context.Context, from string, k protocol.Key) (*protocol.Message, error) {
	return p.n.ms.box.get(ctx, from, k)
}

// TablePath resolves a table against the node's tables dir (the spec's own
// directory in simulations).
func (p *party) TablePath(t job.TableSpec) string {
	if filepath.IsAbs(t.Path) {
		return t.Path
	}
	return filepath.Join(p.n.cfg.TablesDir, t.Path)
}

// secrets reads key material from inside a node's data dir and caches
// what jobs parse from it.
type secrets struct {
	dir string
	mu  sync.Mutex
	// parsed maps the files' names and content digest to the parsed value,
	// so a changed file is parsed again.
	parsed map[string]any
}

func (s *secrets) ReadSecret(name string) ([]byte, error) {
	if !filepath.IsLocal(name) {
		return nil, fmt.Errorf("secret name %q is not a path inside the data dir", name)
	}
	b, err := os.ReadFile(filepath.Join(s.dir, name))
	if err != nil {
		return nil, fmt.Errorf("read secret %s: %w", name, err)
	}
	return b, nil
}

func (s *secrets) Parsed(names []string, parse func([][]byte) (any, error)) (any, error) {
	contents := make([][]byte, len(names))
	h := sha256.New()
	for i, name := range names {
		b, err := s.ReadSecret(name)
		if err != nil {
			return nil, err
		}
		contents[i] = b
		fmt.Fprintf(h, "%s\x00%d\x00", name, len(b))
		h.Write(b)
	}
	key := string(h.Sum(nil))
	s.mu.Lock()
	v, ok := s.parsed[key]
	s.mu.Unlock()
	if ok {
		return v, nil
	}
	v, err := parse(contents)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if len(s.parsed) >= 8 { // key material changes rarely; keep the cache small
		clear(s.parsed)
	}
	s.parsed[key] = v
	s.mu.Unlock()
	return v, nil
}

func (n *Node) jobSpec(j *JobRecord) (*job.Spec, job.Kind, error) {
	spec, err := job.ParseSpec(j.Spec, "job "+j.ID)
	if err != nil {
		return nil, nil, err
	}
	kind, ok := n.kinds[spec.Kind]
	if !ok {
		return nil, nil, fmt.Errorf("%w: unknown job kind %q", job.ErrSpec, spec.Kind)
	}
	return spec, kind, nil
}

// participate runs one step attempt and reports its output to the coordinator.
func (n *Node) participate(ctx context.Context, j *JobRecord, step job.Step, id stepID) {
	defer n.wg.Done()
	defer func() {
		n.mu.Lock()
		delete(n.participating, id)
		n.mu.Unlock()
	}()
	var out stepOutput
	disclosure := protocol.DiscloseControl
	spec, kind, err := n.jobSpec(j)
	if err == nil {
		disclosure = kind.OutputDisclosure(step)
		stepCtx, cancel := context.WithTimeout(ctx, step.Timeout())
		out.Output, err = kind.Participate(stepCtx, &party{n: n, id: j.ID, spec: spec}, step)
		cancel()
	}
	if ctx.Err() != nil {
		return // superseded or shutting down; the new attempt reruns it
	}
	if err != nil {
		out.Error = err.Error()
		n.log.Warn("step failed", "job", j.ID, "phase", step.Phase, "round", step.Round, "err", err)
	}
	out.Bytes = n.ms.bytesSent(j.ID)
	body, err := protocol.Marshal(&out)
	if err == nil {
		msg := step.Message(n.cfg.Name, outputType, body)
		err = n.ms.send(ctx, step.Coordinator, msg, disclosure)
	}
	if err != nil {
		n.log.Warn("could not report step output", "job", j.ID, "phase", step.Phase, "coordinator", step.Coordinator, "err", err)
		return
	}
	n.mu.Lock()
	n.finished[id] = true
	n.mu.Unlock()
}

// coordinate drives one job while this node leads.
func (n *Node) coordinate(ctx context.Context, jobID string) {
	// A new leader holds every committed entry but may not have applied
	// them all yet; the barrier makes the state it resumes from complete.
	if err := n.raft.Barrier(10 * time.Second).Error(); err != nil {
		n.log.Info("not coordinating: barrier failed", "job", jobID, "err", err)
		return
	}
	j, ok := n.fsm.job(jobID)
	if !ok {
		return
	}
	c := &coordinator{party: party{n: n, id: jobID}, started: time.Now()}
	spec, kind, err := n.jobSpec(j)
	var res job.Result
	if err == nil {
		c.spec = spec
		res, err = kind.Coordinate(ctx, c)
	}
	if ctx.Err() != nil || errors.Is(err, errNotLeader) {
		return // deposed or stopping: the next leader resumes from the log
	}
	if err == nil {
		var b []byte
		b, err = n.assembleResult(jobID, spec, res)
		if err == nil {
			err = n.apply(&command{Op: opFinish, Job: jobID, Result: b})
			n.metrics.jobs.WithLabelValues(spec.Kind, StatusDone).Inc()
			if err == nil || errors.Is(err, errNotLeader) {
				return
			}
		}
	}
	n.log.Error("job failed", "job", jobID, "err", err)
	kindName := j.Kind
	n.metrics.jobs.WithLabelValues(kindName, StatusFailed).Inc()
	if aerr := n.apply(&command{Op: opFail, Job: jobID, Error: err.Error()}); aerr != nil && !errors.Is(aerr, errNotLeader) {
		n.log.Error("could not record job failure", "job", jobID, "err", aerr)
	}
}

// assembleResult adds the fields every result.json has: kind, parties,
// timing (seconds per phase) and bytes (sent per party).
func (n *Node) assembleResult(jobID string, spec *job.Spec, res job.Result) ([]byte, error) {
	j, ok := n.fsm.job(jobID)
	if !ok {
		return nil, fmt.Errorf("job %s vanished", jobID)
	}
	timing := map[string]float64{}
	bytes := map[string]int64{}
	for _, s := range j.Steps {
		if s.Done() {
			timing[s.Phase] += s.Finished.Sub(s.Started).Seconds()
			for p, b := range s.Outputs.Bytes {
				if b > bytes[p] {
					bytes[p] = b
				}
			}
		}
	}
	out := map[string]any{}
	for k, v := range res {
		out[k] = v
	}
	out["kind"] = spec.Kind
	out["job"] = jobID
	out["parties"] = spec.PartyNames()
	out["timing"] = timing
	out["bytes"] = bytes
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode result: %w", err)
	}
	return b, nil
}

// coordinator implements job.Coordinator on the leader.
type coordinator struct {
	party
	started time.Time
}

func (c *coordinator) Progress(phase string, done, total int) {
	c.n.mu.Lock()
	c.n.progress[c.id] = Progress{Phase: phase, Done: done, Total: total}
	c.n.mu.Unlock()
}

// Run executes one step on its parties; see job.Coordinator.
func (c *coordinator) Run(ctx context.Context, step job.Step) (*job.Outputs, error) {
	j, ok := c.n.fsm.job(c.id)
	if !ok {
		return nil, fmt.Errorf("job %s is not in the log", c.id)
	}
	step.Attempt = 1
	if rec := j.step(step.Phase, step.Round); rec != nil {
		if rec.Done() {
			return rec.Outputs, nil
		}
		step.Attempt = rec.Attempt + 1
	}
	step.Job, step.Coordinator = c.id, c.n.cfg.Name
	if len(step.Parties) == 0 {
		step.Parties = c.spec.PartyNames()
	}
	sort.Strings(step.Parties)
	if step.TimeoutMS == 0 {
		step.TimeoutMS = int64(c.n.timing.StepMS)
	}
	c.Progress(step.Phase, 0, len(step.Parties))
	if err := c.n.apply(&command{Op: opStart, Job: c.id, Step: &step}); err != nil {
		return nil, err
	}
	began := time.Now()
	outs := &job.Outputs{Coordinator: step.Coordinator, Results: map[string][]byte{}, Failed: map[string]string{}, Bytes: map[string]int64{}}
	var mu sync.Mutex
	var wg sync.WaitGroup
	// Parties get the step timeout plus a grace period for the report itself.
	waitCtx, cancel := context.WithTimeout(ctx, step.Timeout()+time.Duration(c.n.timing.SendMS)*time.Millisecond)
	defer cancel()
	done := 0
	aborted := false
	reported := map[string]bool{}
	wg.Add(1)
	go func() {
		defer wg.Done()
		c.watchReachable(waitCtx, step.Parties, func(p string, why error) {
			mu.Lock()
			defer mu.Unlock()
			if aborted || reported[p] {
				return
			}
			aborted = true
			outs.Failed[p] = fmt.Sprintf("unreachable: %v", why)
			outs.Silent = append(outs.Silent, p)
			cancel() // end the attempt: the others cannot finish without p
		})
	}()
	for _, p := range step.Parties {
		wg.Add(1)
		go func(p string) {
			defer wg.Done()
			m, err := c.n.ms.box.get(waitCtx, p, step.Key(outputType))
			var o stepOutput
			if err == nil {
				err = protocol.Unmarshal(m.Body, &o)
				if p != c.n.cfg.Name { // the report itself crossed the network too
					if b, eerr := protocol.Encode(m); eerr == nil {
						o.Bytes += int64(len(b) + 4)
					}
				}
			}
			mu.Lock()
			defer mu.Unlock()
			reported[p] = true
			if aborted && err != nil {
				return // cut short because another party is unreachable
			}
			switch {
			case err != nil:
				outs.Failed[p] = fmt.Sprintf("no output within %s: %v", step.Timeout(), err)
				outs.Silent = append(outs.Silent, p)
			case o.Error != "":
				outs.Failed[p] = o.Error
				outs.Bytes[p] = o.Bytes
			default:
				outs.Results[p] = o.Output
				outs.Bytes[p] = o.Bytes
			}
			done++
			c.Progress(step.Phase, done, len(step.Parties))
			if done == len(step.Parties) {
				cancel() // stops the reachability watch
			}
		}(p)
	}
	wg.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	sort.Strings(outs.Silent)
	if err := c.n.apply(&command{Op: opDone, Job: c.id, Step: &step, Outputs: outs}); err != nil {
		return nil, err
	}
	c.n.metrics.phaseSecs.WithLabelValues(c.spec.Kind, step.Phase).Observe(time.Since(began).Seconds())
	return outs, nil
}

// Reachability probing: a party whose node cannot be dialled on
// unreachableProbes consecutive probes, probeInterval apart, is declared
// unreachable, so a step does not wait out its timeout for a node that is down.
const (
	probeInterval     = 500 * time.Millisecond
	probeTimeout      = time.Second
	unreachableProbes = 3
)

// watchReachable probes the parties until ctx ends and calls down for the
// first one found unreachable.
func (c *coordinator) watchReachable(ctx context.Context, parties []string, down func(p string, why error)) {
	misses := map[string]int{}
	tick := time.NewTicker(probeInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		for _, p := range parties {
			if p == c.n.cfg.Name {
				continue
			}
			err := c.n.probe(ctx, p)
			if err == nil || ctx.Err() != nil {
				misses[p] = 0
				continue
			}
			if misses[p]++; misses[p] >= unreachableProbes {
				down(p, err)
				return
			}
		}
	}
}

// probe checks that a member's node can be reached: connected already, or
// dialled now.
func (n *Node) probe(ctx context.Context, name string) error {
	id, ok := n.memberID(name)
	if !ok {
		return fmt.Errorf("%q is not a member", name)
	}
	if n.host.Network().Connectedness(id) == network.Connected {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	return n.host.Connect(ctx, peer.AddrInfo{ID: id})
}
