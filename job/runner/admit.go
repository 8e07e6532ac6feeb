package runner

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/wire"
)

// AdmitPhase is the runtime's own first step of every job: each party
// checks the job against its organisation's policy before anything of its
// data is read, and a party whose policy asks a person to approve each job
// waits for that decision in later rounds of the phase. Kinds never see it.
const AdmitPhase = "admit"

// admitOutput is a party's answer in the admit phase.
type admitOutput struct {
	Verdict string `msgpack:"verdict"`
	Rule    string `msgpack:"rule"`
	Reason  string `msgpack:"reason"`
	// Fault, instead of a verdict, says the party could not decide (its
	// policy state cannot be written). It has not admitted the job; the
	// coordinator treats it as a silent party, and the party's first step
	// fails naming the fault, so the job goes on without it where it may.
	Fault string `msgpack:"fault,omitempty"`
}

// AdmitDecision is what the coordinator commits for one admit round: the
// parties still waiting for a person's decision, and each refusing party's
// rule and reason (texts that name no value).
type AdmitDecision struct {
	Awaiting []string          `msgpack:"awaiting"`
	Refused  map[string]string `msgpack:"refused"`
}

// ErrRefused marks a job a party's policy refused.
var ErrRefused = errors.New("refused by policy")

// SubmissionDigest is what a submitter signs: the spec, the nonce and the
// time, each length-prefixed, under a domain separator.
func SubmissionDigest(spec []byte, s *Submission) []byte {
	h := sha256.New()
	h.Write([]byte("cohort/submission/v1\x00"))
	for _, b := range [][]byte{[]byte(s.Member), spec, s.Nonce, []byte(s.Time.UTC().Format(time.RFC3339Nano))} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return h.Sum(nil)
}

// KindHistory returns the records of a job's own steps, without the
// runtime's admit phase: what a kind folds (Participant.History).
func KindHistory(recs []*job.Record) []*job.Record {
	return slices.DeleteFunc(slices.Clone(recs), func(r *job.Record) bool { return r.Step.Phase == AdmitPhase })
}

// admit runs the admit phase: round 0 asks every party; later rounds wait
// for the parties that await a person's decision, within approvalTimeout.
// It returns an error naming every refusing party and its rule.
func (j *coordination) admit(ctx context.Context) error {
	parties := j.spec.PartyNames()
	for round := 0; len(parties) > 0; round++ {
		step := job.Step{Phase: AdmitPhase, Round: round, Parties: parties}
		if round > 0 {
			step.TimeoutMS = j.c.ApprovalTimeout.Milliseconds() // positive: Run validated it
		} else if ms := j.spec.TimeoutMS(); ms > 0 && ms <= job.MaxStepTimeout.Milliseconds() {
			// The job's own steps' timeout bounds its first admission
			// round too: a party that cannot answer holds the job no
			// longer than it would hold any other step.
			step.TimeoutMS = ms
		}
		d, err := j.runAdmit(ctx, step)
		if err != nil {
			return err
		}
		if len(d.Refused) > 0 {
			var msgs []string
			for _, p := range sortedKeys(d.Refused) {
				msgs = append(msgs, fmt.Sprintf("%s: %s", p, d.Refused[p]))
			}
			return fmt.Errorf("%w: %s", ErrRefused, strings.Join(msgs, "; "))
		}
		parties = d.Awaiting
	}
	return nil
}

// runAdmit runs one admit round and folds the parties' answers.
func (j *coordination) runAdmit(ctx context.Context, step job.Step) (*AdmitDecision, error) {
	a, err := j.Start(ctx, step)
	if err != nil {
		return nil, err
	}
	var d AdmitDecision
	if rec := a.Record(); rec != nil {
		if err := wire.Unmarshal(rec.Decision, &d); err != nil {
			return nil, fmt.Errorf("admit round %d: committed decision: %w", step.Round, err)
		}
		return &d, nil
	}
	outs, err := a.Wait(ctx)
	if err != nil {
		return nil, err
	}
	d.Refused = map[string]string{}
	for _, p := range a.Step().Parties {
		var o admitOutput
		if slices.Contains(outs.Silent, p) {
			// A party that does not answer has not admitted the job: its
			// worker checks its policy again before it runs any step, and
			// the kind treats its silence as it treats any other.
			continue
		}
		if why, failed := outs.Failed[p]; failed {
			d.Refused[p] = why
			continue
		}
		if _, answered := outs.Results[p]; !answered {
			// The round was cut short because another party is down:
			// this one's answer never came, which is not a refusal.
			continue
		}
		if err := wire.Unmarshal(outs.Results[p], &o); err != nil {
			d.Refused[p] = "malformed answer"
			continue
		}
		if o.Fault != "" {
			continue // not admitted, not refused: as a silent party
		}
		switch o.Verdict {
		case policy.Accepted:
		case policy.Awaiting:
			d.Awaiting = append(d.Awaiting, p)
		default:
			d.Refused[p] = fmt.Sprintf("rule %s: %s", o.Rule, o.Reason)
		}
	}
	b, err := wire.Marshal(&d)
	if err != nil {
		return nil, err
	}
	if _, err := a.Commit(ctx, outs, b, ""); err != nil {
		return nil, err
	}
	return &d, nil
}

// request is what this member's policy is asked about the job: the
// verified submission, the kind's declared uses, and the datasets this
// member resolves its tables in the spec to.
//
// What it gathers is fixed for the job (the committed submission, the
// kind's declared uses, the datasets the party's tables resolved to when
// the job first reached it), so it is built once per worker and every
// later step is admitted against the same request: re-resolving the
// tables at every step cost a symlink walk per catalogue entry, and could
// only disagree with what the open session already read.
func (w *Worker) request(spec *job.Spec, kind job.Kind) (*policy.Request, error) {
	if w.req != nil {
		return w.req, nil
	}
	req, err := w.buildRequest(spec, kind)
	if err != nil {
		return nil, err
	}
	w.req = req
	return req, nil
}

func (w *Worker) buildRequest(spec *job.Spec, kind job.Kind) (*policy.Request, error) {
	req := &policy.Request{Job: w.Job.ID, Kind: spec.Kind, Self: w.Self, Parties: spec.PartyNames()}
	if rec, ok := w.State.Job(w.Job.ID); ok && rec.Submission != nil {
		who, err := w.Member.Submitter(rec.Spec, rec.Submission)
		if err != nil {
			return nil, fmt.Errorf("party %s: the job's submission does not verify: %w", w.Self, err)
		}
		req.Submitter, req.Nonce = who, rec.Submission.Nonce
		req.Signed, req.SubmittedAt = true, rec.Submission.Time
	}
	if d, ok := kind.(job.Discloser); ok {
		uses, err := d.Uses(spec, w.Self)
		if err != nil {
			return nil, err
		}
		req.Uses, req.Declared = uses, true
	}
	req.Datasets, req.Unavailable = map[string]string{}, map[string]string{}
	if ps, ok := spec.Party(w.Self); ok {
		for _, t := range ps.Tables {
			name, err := w.Member.Dataset(t)
			if err != nil {
				req.Unavailable[t.Name] = err.Error()
				continue
			}
			req.Datasets[t.Name] = name
		}
	}
	return req, nil
}

// admitStep is a party's answer in the admit phase: its policy's verdict,
// waiting for a person's decision in the rounds after the first.
func (w *Worker) admitStep(ctx context.Context, step job.Step, spec *job.Spec, kind job.Kind) ([]byte, error) {
	if w.Policy == nil {
		return wire.Marshal(&admitOutput{Verdict: policy.Accepted})
	}
	req, err := w.request(spec, kind)
	if err != nil {
		return nil, err
	}
	d := w.Policy.Admit(req)
	if d.Verdict == policy.Awaiting && step.Round > 0 {
		if d, err = w.Policy.WaitApproval(ctx, req); err != nil {
			return nil, err
		}
	}
	if d.Fault != nil {
		return wire.Marshal(&admitOutput{Fault: d.Fault.Error()})
	}
	return wire.Marshal(&admitOutput{Verdict: d.Verdict, Rule: d.Rule, Reason: d.Reason})
}

// admitted checks, before a kind's step runs here, that this member's
// policy admits the job now (a coordinator that skipped the admit phase
// gains nothing) and that the step names only the job's parties. It
// returns the request the policy admitted (nil without a policy).
func (w *Worker) admitted(step job.Step, spec *job.Spec, kind job.Kind) (*policy.Request, error) {
	for _, p := range step.Parties {
		if !slices.Contains(spec.PartyNames(), p) {
			return nil, fmt.Errorf("%w: step %s/%d names %s, not a party of the job (coordinator %s)", ErrRefused, step.Phase, step.Round, p, step.Coordinator)
		}
	}
	if w.Policy == nil {
		return nil, nil
	}
	req, err := w.request(spec, kind)
	if err != nil {
		return nil, err
	}
	d := w.Policy.Admit(req)
	if d.Fault != nil {
		return nil, d.Fault
	}
	switch d.Verdict {
	case policy.Accepted:
		return req, nil
	case policy.Awaiting:
		return nil, fmt.Errorf("%w: job %s awaits approval at %s (coordinator %s started step %s/%d before it)", ErrRefused, w.Job.ID, w.Self, step.Coordinator, step.Phase, step.Round)
	default:
		return nil, fmt.Errorf("%w: refused by %s's policy: rule %s: %s", ErrRefused, w.Self, d.Rule, d.Reason)
	}
}
