package node

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// The coordinator side: driving a job while this node leads.

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
