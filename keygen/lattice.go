package keygen

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/wire"
)

// The lattice variant (params: {scheme: bgv}) generates the lattice key of
// secureagg's lattice backend with package mhe's multiparty key
// generation, no dealer: after the joint seed's two steps (seed-commit and
// seed-reveal, job.JointSeed), two steps.
//
//  1. bgv-generate (args: the quorum): every party draws its key-generation
//     shares (lattice.KeyGen.GenShares, the common reference polynomial from
//     the joint seed, which it folds from the log and checks, and the
//     step's attempt), sends its public-key
//     share to every other party (keygen/bgv-public, disclosure
//     keygen-public-value) and each other party its Shamir share of its
//     secret (keygen/bgv-secret, keygen-share), folds the N public shares
//     and the N secret shares meant for it, finalises its key and stages
//     it. It then confirms the key with a test aggregation of the staged
//     keys (secureagg's lattice backend on the step's sub-channel
//     "confirm", every party adding 1 to slot 0 and its own Shamir point
//     to slot 1; the verified plan compares quorums, so a wrong Shamir
//     share shows as a disagreement and blame names its holder) and
//     reports the key id. The coordinator commits the key id when every
//     party reports the same.
//  2. bgv-install (args: the generate step's attempt and the key id):
//     each party checks the args against the log, reads its staged key,
//     checks its id and installs keys/lattice.pub, keys/lattice.share and
//     keys/lattice.info (made: dealerless) through the one owner of key
//     files (package keyring).
//
// Leakage: public-key shares are RLWE samples under the common reference
// polynomial (they reveal nothing of a member's secret under RLWE); a
// Shamir share of a member's secret goes to its one recipient only; the
// confirmation reveals the sum of the members' points, which is public.
// A member that sends different public-key shares to different members
// makes their keys differ: the coordinator fails the step naming the key
// ids' holders. A wrong Shamir share is found by the confirmation.

// Schemes of params.scheme.
const (
	SchemePaillier = "paillier"
	SchemeBGV      = "bgv"
)

// Phases of the lattice variant.
const (
	PhaseLatticeGenerate = "bgv-generate"
	PhaseLatticeInstall  = "bgv-install"
)

// Message types of the lattice variant.
const (
	typeLatticePublic = "keygen/bgv-public"
	typeLatticeSecret = "keygen/bgv-secret"
)

var (
	latticeGenRound     = job.Round[latticeGenArgs, latticeKeyOutput, latticeKeyDecision]{Phase: PhaseLatticeGenerate}
	latticeInstallRound = job.Round[latticeInstallArgs, latticeKeyOutput, latticeKeyDecision]{Phase: PhaseLatticeInstall}
)

type latticeGenArgs struct {
	Quorum int `msgpack:"quorum"`
}

type latticeInstallArgs struct {
	Attempt int    `msgpack:"attempt"`
	KeyID   string `msgpack:"key_id"`
}

// latticeKeyOutput is a party's report: the id of the key it staged or
// installed (public).
type latticeKeyOutput struct {
	KeyID string `msgpack:"key_id"`
}

// latticeKeyDecision is the key id every party reported.
type latticeKeyDecision struct {
	KeyID string `msgpack:"key_id"`
}

// coordinateLattice runs the lattice variant.
func coordinateLattice(ctx context.Context, c job.Coordinator, prm *Params) (job.Result, error) {
	parties := c.Spec().PartyNames()
	quorum := lattice.DefaultQuorum(len(parties))
	gen, err := latticeGenRound.Run(ctx, c, job.Call[latticeGenArgs]{Parties: parties, Args: latticeGenArgs{Quorum: quorum}, TimeoutMS: prm.TimeoutMS},
		func(o *job.Outcome[latticeKeyOutput]) (latticeKeyDecision, error) { return agreeOnKey(o, parties) })
	if err != nil {
		return nil, err
	}
	args := latticeInstallArgs{Attempt: gen.Record.Step.Attempt, KeyID: gen.Decision.KeyID}
	inst, err := latticeInstallRound.Run(ctx, c, job.Call[latticeInstallArgs]{Parties: parties, Args: args, TimeoutMS: prm.TimeoutMS},
		func(o *job.Outcome[latticeKeyOutput]) (latticeKeyDecision, error) { return agreeOnKey(o, parties) })
	if err != nil {
		return nil, err
	}
	return job.Result{"scheme": SchemeBGV, "key_id": inst.Decision.KeyID, "quorum": quorum, "params": lattice.ParamsBGV13,
		"made": keyring.MadeDealerless}, nil
}

// agreeOnKey commits the key id when every party reported the same one.
func agreeOnKey(o *job.Outcome[latticeKeyOutput], parties []string) (latticeKeyDecision, error) {
	if err := o.Err(); err != nil {
		return latticeKeyDecision{}, err
	}
	byID := map[string][]string{}
	for _, p := range parties {
		r, ok := o.Results[p]
		if !ok {
			return latticeKeyDecision{}, fmt.Errorf("party %s reported no key", p)
		}
		byID[r.KeyID] = append(byID[r.KeyID], p)
	}
	if len(byID) != 1 {
		var groups []string
		for _, ps := range byID {
			groups = append(groups, strings.Join(ps, ", "))
		}
		slices.Sort(groups)
		return latticeKeyDecision{}, fmt.Errorf("the parties hold %d different keys (%s): a party sent different public-key shares", len(byID), strings.Join(groups, " | "))
	}
	return latticeKeyDecision{KeyID: o.Results[parties[0]].KeyID}, nil
}

// latticeStep serves the lattice variant's steps, refusing any the log
// does not determine.
func (s *session) latticeStep(ctx context.Context, step job.Step) ([]byte, error) {
	parties := s.p.Spec().PartyNames()
	if !slices.Equal(step.Parties, parties) {
		return nil, fmt.Errorf("party %s refuses %s over %v: key generation runs over every member (coordinator %s)", s.p.Self(), step.Phase, step.Parties, step.Coordinator)
	}
	gens := latticeGenRound.History(s.p.History())
	switch step.Phase {
	case job.PhaseSeedCommit, job.PhaseSeedReveal:
		if len(gens) > 0 {
			return nil, fmt.Errorf("party %s refuses %s after %s (coordinator %s)", s.p.Self(), step.Phase, PhaseLatticeGenerate, step.Coordinator)
		}
		return s.js.Serve(s.p, step)
	case PhaseLatticeGenerate:
		if len(gens) > 0 || len(latticeInstallRound.History(s.p.History())) > 0 {
			return nil, fmt.Errorf("party %s refuses a second %s step (coordinator %s)", s.p.Self(), step.Phase, step.Coordinator)
		}
		joint, err := s.jointSeedOf()
		if err != nil {
			return nil, fmt.Errorf("party %s refuses %s: %w (coordinator %s)", s.p.Self(), step.Phase, err, step.Coordinator)
		}
		return latticeGenRound.Serve(step, func(a latticeGenArgs) (latticeKeyOutput, error) {
			if a.Quorum != lattice.DefaultQuorum(len(parties)) {
				return latticeKeyOutput{}, fmt.Errorf("party %s refuses a quorum of %d: the default for %d members is %d (coordinator %s)",
					s.p.Self(), a.Quorum, len(parties), lattice.DefaultQuorum(len(parties)), step.Coordinator)
			}
			return s.latticeGenerate(ctx, step, a.Quorum, joint)
		})
	case PhaseLatticeInstall:
		return latticeInstallRound.Serve(step, func(a latticeInstallArgs) (latticeKeyOutput, error) {
			if len(gens) != 1 || len(latticeInstallRound.History(s.p.History())) > 0 {
				return latticeKeyOutput{}, fmt.Errorf("party %s refuses %s: the log holds no key to install (coordinator %s)", s.p.Self(), step.Phase, step.Coordinator)
			}
			d, err := latticeGenRound.Decision(gens[0])
			if err != nil {
				return latticeKeyOutput{}, err
			}
			if a.Attempt != gens[0].Step.Attempt || a.KeyID != d.KeyID {
				return latticeKeyOutput{}, fmt.Errorf("party %s refuses to install a key the log did not commit (coordinator %s)", s.p.Self(), step.Coordinator)
			}
			return s.latticeInstall(a)
		})
	}
	return nil, fmt.Errorf("party %s refuses a %s step in a keygen job of scheme bgv (coordinator %s)", s.p.Self(), step.Phase, step.Coordinator)
}

// latticeNonce is the key generation's common reference seed: the joint
// seed every party drew (job.JointSeed; no coordinator chooses the common
// reference polynomial) and the step's attempt, so a re-run attempt draws
// afresh.
func latticeNonce(joint []byte, attempt int) []byte {
	h := sha256.New()
	h.Write([]byte("cohort/keygen/bgv/v2"))
	h.Write(joint)
	h.Write(binary.BigEndian.AppendUint64(nil, uint64(attempt)))
	return h.Sum(nil)
}

func latticeStageDir(jobID string, attempt int) string {
	return stageDir(jobID, attempt) + "/bgv"
}

// latticeGenerate is one party's part of bgv-generate.
func (s *session) latticeGenerate(ctx context.Context, step job.Step, quorum int, joint []byte) (latticeKeyOutput, error) {
	params, err := lattice.NewParams(lattice.ParamsBGV13)
	if err != nil {
		return latticeKeyOutput{}, err
	}
	members := step.Parties // sorted, as the spec's party names
	kg, err := lattice.NewKeyGen(params, members, quorum, latticeNonce(joint, step.Attempt))
	if err != nil {
		return latticeKeyOutput{}, err
	}
	self := s.p.Self()
	pub, secrets, err := kg.GenShares(self)
	if err != nil {
		return latticeKeyOutput{}, err
	}
	pubFold, secretFold, err := s.exchangeLattice(ctx, step, kg, pub, secrets)
	if err != nil {
		return latticeKeyOutput{}, err
	}
	keys, err := kg.Finalise(self, pubFold, secretFold)
	if err != nil {
		return latticeKeyOutput{}, fmt.Errorf("party %s: finalise the lattice key: %w", self, err)
	}
	if err := confirmLattice(ctx, s.p, step, keys); err != nil {
		return latticeKeyOutput{}, err
	}
	if err := keyring.StageLattice(s.p.Secrets(), latticeStageDir(s.p.JobID(), step.Attempt), keys); err != nil {
		return latticeKeyOutput{}, fmt.Errorf("party %s: stage the lattice key: %w", self, err)
	}
	id := keys.ID()
	return latticeKeyOutput{KeyID: hex.EncodeToString(id[:])}, nil
}

// exchangeLattice sends this party's public-key share to every other
// party and each other party its secret share, receives theirs and folds
// them with its own, in member order.
func (s *session) exchangeLattice(ctx context.Context, step job.Step, kg *lattice.KeyGen, pub *lattice.PublicKeyShare, secrets []*lattice.SecretShare) (*lattice.PublicKeyShare, *lattice.SecretShare, error) {
	self := s.p.Self()
	me := slices.Index(step.Parties, self)
	pubBytes, err := pub.MarshalBinary()
	if err != nil {
		return nil, nil, err
	}
	n := len(step.Parties)
	pubs := make([]*lattice.PublicKeyShare, n)
	secs := make([]*lattice.SecretShare, n)
	pubs[me], secs[me] = pub, secrets[me]
	errs := make([]error, n)
	var wg sync.WaitGroup
	for j, peer := range step.Parties {
		if j == me {
			continue
		}
		wg.Go(func() {
			secBytes, err := secrets[j].MarshalBinary()
			if err == nil {
				err = s.p.Send(ctx, peer, step.Message(self, typeLatticePublic, pubBytes), DiscloseBiprimality)
			}
			if err == nil {
				err = s.p.Send(ctx, peer, step.Message(self, typeLatticeSecret, secBytes), DiscloseShares)
			}
			if err == nil {
				pubs[j], secs[j], err = receiveLattice(ctx, s.p, step, kg, peer)
			}
			errs[j] = err
		})
	}
	wg.Wait()
	for j, err := range errs {
		if err != nil {
			return nil, nil, fmt.Errorf("party %s: lattice key shares with %s: %w", self, step.Parties[j], err)
		}
	}
	pubFold, secFold := kg.AllocatePublicShare(), kg.AllocateSecretShare()
	for j := range n {
		if j == 0 {
			pubFold, secFold = pubs[0], secs[0]
			continue
		}
		next, nextSec := kg.AllocatePublicShare(), kg.AllocateSecretShare()
		if err := kg.AggregatePublic(pubFold, pubs[j], next); err != nil {
			return nil, nil, fmt.Errorf("party %s: fold %s's public-key share: %w", self, step.Parties[j], err)
		}
		if err := kg.AggregateSecret(secFold, secs[j], nextSec); err != nil {
			return nil, nil, fmt.Errorf("party %s: fold %s's secret share: %w", self, step.Parties[j], err)
		}
		pubFold, secFold = next, nextSec
	}
	return pubFold, secFold, nil
}

// receiveLattice receives and decodes peer's two shares.
func receiveLattice(ctx context.Context, p job.Participant, step job.Step, kg *lattice.KeyGen, peer string) (*lattice.PublicKeyShare, *lattice.SecretShare, error) {
	m, err := p.Receive(ctx, peer, step.Key(typeLatticePublic))
	if err != nil {
		return nil, nil, err
	}
	pub := kg.AllocatePublicShare()
	if err := pub.UnmarshalBinary(m.Body); err != nil {
		return nil, nil, fmt.Errorf("%w: public-key share: %w", wire.ErrMalformed, err)
	}
	if m, err = p.Receive(ctx, peer, step.Key(typeLatticeSecret)); err != nil {
		return nil, nil, err
	}
	sec := kg.AllocateSecretShare()
	if err := sec.UnmarshalBinary(m.Body); err != nil {
		return nil, nil, fmt.Errorf("%w: secret share: %w", wire.ErrMalformed, err)
	}
	return pub, sec, nil
}

// confirmLattice runs a test aggregation under the new key (slot 0: one
// per party; slot 1: each party's Shamir point) and checks its sum and
// that no party's decryption share was wrong.
func confirmLattice(ctx context.Context, p job.Participant, step job.Step, keys *lattice.Keys) error {
	cfg := secureagg.Config{Backend: secureagg.BackendLattice, Lattice: keys, FracBits: 0, ValueBits: 8}
	// No data of the party: the policy's guard checks the step's parties.
	res, o, err := secureagg.Contribute(ctx, p, step.Sub("confirm"), cfg, secureagg.Contribution{Vector: []float64{1, float64(keys.Self)}})
	if err == nil && res == nil {
		err = fmt.Errorf("parties missing: %s", strings.Join(o.Missing, ", "))
	}
	if err != nil {
		return fmt.Errorf("party %s: the new lattice key's test aggregation: %w", p.Self(), err)
	}
	n := len(step.Parties)
	if len(res.Excluded) > 0 {
		return fmt.Errorf("party %s: the new lattice key's test aggregation excluded %v: a member's key share is wrong", p.Self(), slices.Sorted(maps.Keys(res.Excluded)))
	}
	if res.Sum[0] != float64(n) || res.Sum[1] != float64(n*(n+1)/2) {
		return fmt.Errorf("party %s: the new lattice key's test aggregation decrypted a wrong sum", p.Self())
	}
	return nil
}

// latticeInstall installs the staged key the log committed.
func (s *session) latticeInstall(a latticeInstallArgs) (latticeKeyOutput, error) {
	k, err := keyring.ReadStagedLattice(s.p.Secrets(), latticeStageDir(s.p.JobID(), a.Attempt))
	if err != nil {
		return latticeKeyOutput{}, fmt.Errorf("party %s: read the staged lattice key: %w", s.p.Self(), err)
	}
	id := k.ID()
	if hex.EncodeToString(id[:]) != a.KeyID {
		return latticeKeyOutput{}, fmt.Errorf("party %s: its staged lattice key is not the committed one", s.p.Self())
	}
	if err := keyring.InstallLattice(s.p.Secrets(), k, keyring.LatticeInfo(k, keyring.MadeDealerless, s.p.JobID())); err != nil {
		return latticeKeyOutput{}, fmt.Errorf("party %s: install the lattice key: %w", s.p.Self(), err)
	}
	return latticeKeyOutput{KeyID: a.KeyID}, nil
}
