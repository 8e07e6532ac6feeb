package keygen

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier/dealerless"
	"github.com/cohortdm/cohort/wire"
)

// msgType is the type of every keygen peer message; the round travels in
// the step's channel.
const msgType = "keygen/round"

// stageDir is where a party keeps a generated key until it is installed:
// one directory per job and attempt, so a re-run never reuses a stale
// share.
func stageDir(jobID string, attempt int) string {
	return path.Join("keys", "keygen", jobID, strconv.Itoa(attempt))
}

// Open opens a party's session. Across steps it holds this party's
// generator and, once a search step has found a modulus, its secret shares
// of the factors, in memory only: a node that restarts after the search
// cannot finish, and the job fails naming it. The finish step stages the
// key files in the data dir, so a restarted node still installs.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, params: prm, js: jointSeed(p.JobID(), p.Spec()), cands: map[[2]int]*dealerless.Candidate{}}, nil
}

type session struct {
	p      job.Participant
	params *Params
	js     job.JointSeed // the job's public randomness, drawn by every party
	gen    *dealerless.Party
	cands  map[[2]int]*dealerless.Candidate // by search round and attempt
}

// jointSeed is the draw of the job's public randomness: one, round 0, over
// every party of the spec.
func jointSeed(jobID string, spec *job.Spec) job.JointSeed {
	return job.NewJointSeed(jobID, 0, spec.PartyNames())
}

// Close forgets the candidate shares.
func (s *session) Close() { clear(s.cands) }

// Step runs a search, finish or install step, once it has checked that it
// is the step the log determines (see expect).
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if s.params.Scheme == SchemeBGV {
		return s.latticeStep(ctx, step) // which refuses the Paillier key's steps
	}
	next, err := expect(s.p.Spec().PartyNames(), s.p.History())
	if err != nil {
		return nil, fmt.Errorf("party %s refuses %s round %d: %w (coordinator %s)", s.p.Self(), step.Phase, step.Round, err, step.Coordinator)
	}
	if err := next.admit(s.p.Self(), s.p.Spec().PartyNames(), step); err != nil {
		return nil, err
	}
	switch step.Phase {
	case job.PhaseSeedCommit, job.PhaseSeedReveal:
		return s.js.Serve(s.p, step)
	case PhaseSearch:
		return searchRound.Serve(step, func(none) (searchOutput, error) { return s.search(ctx, step) })
	case PhaseFinish:
		return finishRound.Serve(step, func(a finishArgs) (finishOutput, error) { return s.finish(ctx, step, a) })
	}
	return installRound.Serve(step, func(a installArgs) (installOutput, error) { return s.install(step, a) })
}

// due is the step the log determines next: the joint seed's two steps,
// search rounds until one found a modulus, the finish of that round's attempt, the install of the key the
// finish step committed, then nothing. A coordinator cannot have a party
// convert the factors' shares of another search attempt than the committed
// one, or install a key other than the committed one.
type due struct {
	phase   string // "" once the key is installed
	round   int
	finish  finishArgs
	install installArgs
}

// expect replays a job's committed records into the step due next.
func expect(parties []string, hist []*job.Record) (due, error) {
	n := due{phase: job.PhaseSeedCommit}
	for _, rec := range hist {
		st := rec.Step
		if st.Phase != n.phase || st.Round != n.round || !slices.Equal(st.Parties, parties) {
			return due{}, fmt.Errorf("the log holds %s round %d where it determines %s round %d", st.Phase, st.Round, n.phase, n.round)
		}
		switch st.Phase {
		case job.PhaseSeedCommit, job.PhaseSeedReveal:
			// Checked when the seed is used (JointSeed.Seed).
			if rec.Error != "" {
				return due{}, fmt.Errorf("the log holds %s round %d failed", st.Phase, st.Round)
			}
			n.phase = PhaseSearch
			if st.Phase == job.PhaseSeedCommit {
				n.phase = job.PhaseSeedReveal
			}
		case PhaseSearch:
			d, err := searchRound.Decision(rec)
			if err != nil {
				return due{}, err
			}
			n.round++
			if len(d.N) > 0 {
				if d.Attempt != st.Attempt {
					return due{}, fmt.Errorf("search round %d committed a modulus of attempt %d in attempt %d", st.Round, d.Attempt, st.Attempt)
				}
				n = due{phase: PhaseFinish, finish: finishArgs{Round: st.Round, Attempt: st.Attempt}}
			}
		case PhaseFinish:
			d, err := finishRound.Decision(rec)
			if err != nil {
				return due{}, err
			}
			if d.Attempt != st.Attempt {
				return due{}, fmt.Errorf("the finish step committed a key of attempt %d in attempt %d", d.Attempt, st.Attempt)
			}
			n = due{phase: PhaseInstall, install: installArgs{Attempt: st.Attempt, KeyID: d.KeyID}}
		case PhaseInstall:
			n = due{}
		}
	}
	return n, nil
}

// admit checks a step against the one due; the refusal names the
// coordinator that asked for it.
func (n due) admit(self string, parties []string, step job.Step) error {
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("party %s refuses %s round %d: coordinator %s %s", self, step.Phase, step.Round, step.Coordinator, fmt.Sprintf(format, a...))
	}
	if step.Phase != n.phase || step.Round != n.round || !slices.Equal(step.Parties, parties) {
		return refuse("asks for it on %v where the log determines %s round %d on every party", step.Parties, n.phase, n.round)
	}
	switch step.Phase {
	case PhaseFinish:
		a, err := finishRound.Args(step)
		if err != nil {
			return err
		}
		if a != n.finish {
			return refuse("asks to convert the modulus of search round %d attempt %d; the log determines round %d attempt %d", a.Round, a.Attempt, n.finish.Round, n.finish.Attempt)
		}
	case PhaseInstall:
		a, err := installRound.Args(step)
		if err != nil {
			return err
		}
		if a.Attempt != n.install.Attempt || !bytes.Equal(a.KeyID, n.install.KeyID) {
			return refuse("asks to install a key the finish step did not commit")
		}
	}
	return nil
}

// publicSeed is the job's public randomness for dealerless (biprimality
// bases, H, v, the test ciphertext), from the joint seed that every party
// drew (job.JointSeed), never the leader's job seed alone: a coordinator
// that could choose the bases could pass a modulus that is no biprime.
// Secrets and pair seeds are fresh in every step attempt.
func publicSeed(joint []byte) []byte {
	h := sha256.New()
	h.Write([]byte("cohort/keygen/public-seed/v2"))
	h.Write(joint)
	return h.Sum(nil)
}

// jointSeedOf is the joint seed as this party folds it from the log; it
// fails unless the draw is complete, every opening matches its commitment
// and the party's own is the contribution it keeps.
func (s *session) jointSeedOf() ([]byte, error) {
	seed, err := s.js.Seed(s.p)
	if err != nil {
		return nil, fmt.Errorf("keygen: %w", err)
	}
	return seed, nil
}

// generator returns this party's dealerless generator and the step's
// network.
func (s *session) generator(step job.Step) (*dealerless.Party, *stepNet, error) {
	parties := step.Parties
	if !slices.Equal(parties, s.p.Spec().PartyNames()) {
		return nil, nil, fmt.Errorf("keygen: step parties %v are not the spec's %v", parties, s.p.Spec().PartyNames())
	}
	idx, ok := slices.BinarySearch(parties, s.p.Self())
	if !ok {
		return nil, nil, fmt.Errorf("keygen: %s is not a party of the step", s.p.Self())
	}
	if s.gen == nil {
		joint, err := s.jointSeedOf()
		if err != nil {
			return nil, nil, err
		}
		g, err := dealerless.NewParty(dealerless.Config{
			Bits: s.params.Bits, Parties: len(parties), Index: idx + 1, Names: parties,
			PublicSeed: publicSeed(joint), Batch: s.params.Batch,
		})
		if err != nil {
			return nil, nil, err
		}
		s.gen = g
	}
	return s.gen, &stepNet{net: job.StepNet{Party: s.p, Step: step}, parties: parties, self: idx + 1}, nil
}

func msOf(t map[string]time.Duration) map[string]int64 {
	out := make(map[string]int64, len(t))
	for k, d := range t {
		out[k] = d.Milliseconds()
	}
	return out
}

func (s *session) search(ctx context.Context, step job.Step) (searchOutput, error) {
	gen, net, err := s.generator(step)
	if err != nil {
		return searchOutput{}, err
	}
	c, st, err := gen.Search(ctx, net, s.params.Chunk)
	if err != nil {
		return searchOutput{}, err
	}
	out := searchOutput{Attempt: step.Attempt, Tried: st.Tried, TimingMS: msOf(st.Timing)}
	if c != nil {
		clear(s.cands) // only the latest modulus can be the one finished
		s.cands[[2]int{step.Round, step.Attempt}] = c
		out.N = c.N.Bytes()
	}
	return out, nil
}

// finish converts the modulus found by the committed search step into this
// party's key share, verified with every other party's, and stages the key
// files under a directory of this attempt.
func (s *session) finish(ctx context.Context, step job.Step, args finishArgs) (finishOutput, error) {
	c, ok := s.cands[[2]int{args.Round, args.Attempt}]
	if !ok {
		return finishOutput{}, fmt.Errorf("keygen: %s holds no shares of the modulus of search round %d attempt %d (its node restarted since); run keygen again", s.p.Self(), args.Round, args.Attempt)
	}
	gen, net, err := s.generator(step)
	if err != nil {
		return finishOutput{}, err
	}
	ks, st, err := gen.Finish(ctx, net, c)
	if err != nil {
		return finishOutput{}, err
	}
	keys := &keyring.Paillier{Members: step.Parties, Share: ks}
	if err := keyring.StagePaillier(s.p.Secrets(), stageDir(step.Job, step.Attempt), keys); err != nil {
		return finishOutput{}, fmt.Errorf("keygen: stage the key: %w", err)
	}
	return finishOutput{Attempt: step.Attempt, KeyID: ks.Public.KeyID[:], TimingMS: msOf(st.Timing)}, nil
}

// install checks that the staged key is the one every party reported and
// installs it as the node's threshold key, with its info file.
func (s *session) install(step job.Step, args installArgs) (installOutput, error) {
	if err := args.check(); err != nil {
		return installOutput{}, err
	}
	keys, err := keyring.ReadStagedPaillier(s.p.Secrets(), stageDir(step.Job, args.Attempt))
	if err != nil {
		return installOutput{}, fmt.Errorf("keygen: staged key of attempt %d: %w", args.Attempt, err)
	}
	id := keys.Public().KeyID
	if string(id[:]) != string(args.KeyID) {
		return installOutput{}, fmt.Errorf("keygen: staged key %x is not the agreed key %x", id[:8], args.KeyID)
	}
	if err := keyring.InstallPaillier(s.p.Secrets(), keys, keyring.PaillierInfo(keys, keyring.MadeDealerless, step.Job)); err != nil {
		return installOutput{}, fmt.Errorf("keygen: install: %w", err)
	}
	return installOutput{KeyID: id[:]}, nil
}

// stepNet carries dealerless rounds as peer messages within the generate
// step: each round is a sub-channel of the step.
type stepNet struct {
	net     job.StepNet
	parties []string
	self    int
}

func disclosure(round string) wire.Disclosure {
	for _, pre := range []string{"bip", "vk", "check"} {
		if strings.HasPrefix(round, pre) {
			return DiscloseBiprimality
		}
	}
	return DiscloseShares
}

func (n *stepNet) Exchange(ctx context.Context, round string, out [][]byte) ([][]byte, error) {
	net := n.net.Sub(round)
	// A failed send ends the round at once: waiting for the others would
	// only run into the step's timeout.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	errs := make([]error, len(n.parties))
	for k, name := range n.parties {
		if k+1 == n.self {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := net.Send(ctx, name, msgType, out[k], disclosure(round)); err != nil {
				errs[k] = fmt.Errorf("send to %s: %w", name, err)
				cancel()
			}
		}()
	}
	in := make([][]byte, len(n.parties))
	var recvErr error
	for k, name := range n.parties {
		if k+1 == n.self {
			continue
		}
		body, err := net.Receive(ctx, name, msgType)
		if err != nil {
			recvErr = fmt.Errorf("no message from %s: %w", name, err)
			break
		}
		in[k] = body
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if recvErr != nil {
		return nil, recvErr
	}
	return in, nil
}
