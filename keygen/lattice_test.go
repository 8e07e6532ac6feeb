package keygen

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/secureagg"
)

// params: {scheme: bgv} generates one lattice key for 3 and 5 members
// without a dealer: every member installs the same public key with its own
// share and an info file saying so, the key sums exactly over the lattice
// backend, and no member's key share is in any message or log entry.
func TestKeygenLattice(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			sp := spec(t, n, 512, ", scheme: bgv")
			sec, dirs := secrets(t, sp)
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			rep, err := jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec})
			if err != nil {
				t.Fatal(err)
			}
			keys := map[string]*lattice.Keys{}
			for _, name := range sp.PartyNames() {
				k, err := keyring.LoadLattice(dirs[name])
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				keys[name] = k
				info, err := keyring.LoadInfo(dirs[name], keyring.LatticeInfoFile)
				if err != nil || info.Made != keyring.MadeDealerless || info.KeyID != rep.Result["key_id"] || info.Threshold != lattice.DefaultQuorum(n) {
					t.Fatalf("%s: info %+v (%v), result %v", name, info, err, rep.Result)
				}
				share, err := os.ReadFile(filepath.Join(dirs[name], filepath.FromSlash(keyring.LatticeShareFile)))
				if err != nil {
					t.Fatal(err)
				}
				secret := share[len(share)-4096:] // the share's polynomial coefficients, at the end of its file
				for _, s := range rep.Sent {
					if bytes.Contains(s.Message.Body, secret) {
						t.Fatalf("%s sent %s's key share to %s", s.From, name, s.To)
					}
				}
				if len(rep.LogHolding(secret)) > 0 {
					t.Fatalf("the log holds %s's key share", name)
				}
			}
			if _, err := rep.CheckJointSeed(jointSeed(rep.JobID, sp)); err != nil {
				t.Fatalf("the joint seed: %v", err)
			}
			first := keys[sp.PartyNames()[0]].ID()
			for name, k := range keys {
				if k.ID() != first || k.Name() != name {
					t.Fatalf("%s holds key %x as %s, the first %x", name, k.ID(), k.Name(), first)
				}
			}
			sumWith(t, keys, sp.PartyNames())
		})
	}
}

// sumWith runs one lattice aggregation over the keys and checks its sum.
func sumWith(t *testing.T, keys map[string]*lattice.Keys, names []string) {
	t.Helper()
	net := jobtest.NewNetwork(names...)
	step := job.Step{Job: "check", Phase: "sum", Parties: names, Coordinator: names[0], TimeoutMS: 60000}
	var wg sync.WaitGroup
	errs := make([]error, len(names))
	sums := make([][]float64, len(names))
	for i, name := range names {
		wg.Go(func() {
			cfg := secureagg.Config{Backend: secureagg.BackendLattice, Lattice: keys[name], FracBits: 8, ValueBits: 30}
			res, err := secureagg.Aggregate(t.Context(), net.Party(name), step, cfg, []float64{float64(i) + 0.5, -3})
			if err == nil {
				sums[i] = res.Sum
			}
			errs[i] = err
		})
	}
	wg.Wait()
	n := float64(len(names))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", names[i], err)
		}
		if sums[i][0] != n*(n-1)/2+n/2 || sums[i][1] != -3*n {
			t.Fatalf("%s: sum %v", names[i], sums[i])
		}
	}
}

// A bad params.scheme is refused naming the field; the lattice variant
// declares ciphertexts (its test aggregation) beside the key shares.
func TestKeygenLatticeParams(t *testing.T) {
	t.Parallel()
	err := Kind{}.Validate(spec(t, 3, 512, ", scheme: rsa"))
	if err == nil || !strings.Contains(err.Error(), "params.scheme") {
		t.Fatalf("scheme rsa: %v", err)
	}
	uses, err := Kind{}.Uses(spec(t, 3, 512, ", scheme: bgv"), "pa")
	if err != nil || len(uses) != 3 {
		t.Fatalf("uses %v, %v", uses, err)
	}
}

// lyingKind's coordinator generates a lattice key, then asks what the log
// does not determine: the install of another key id, or a second
// generation.
type lyingKind struct {
	Kind
	second bool
}

func (k lyingKind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	parties := c.Spec().PartyNames()
	if _, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, 0); err != nil {
		return nil, err
	}
	call := job.Call[latticeGenArgs]{Parties: parties, Args: latticeGenArgs{Quorum: lattice.DefaultQuorum(len(parties))}}
	agree := func(o *job.Outcome[latticeKeyOutput]) (latticeKeyDecision, error) { return agreeOnKey(o, parties) }
	gen, err := latticeGenRound.Run(ctx, c, call, agree)
	if err != nil {
		return nil, err
	}
	if k.second {
		call.Round = 1
		_, err = latticeGenRound.Run(ctx, c, call, agree)
		return nil, err
	}
	other := strings.Repeat("ab", len(gen.Decision.KeyID)/2)
	_, err = latticeInstallRound.Run(ctx, c, job.Call[latticeInstallArgs]{Parties: parties,
		Args: latticeInstallArgs{Attempt: gen.Record.Step.Attempt, KeyID: other}}, agree)
	return nil, err
}

// Every party refuses to install a key the log did not commit, or to
// generate a second key in the job, naming the coordinator; nothing is
// installed.
func TestKeygenLatticeRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		second bool
		want   string
	}{{false, "refuses to install a key the log did not commit"}, {true, "refuses a second bgv-generate step"}} {
		sp := spec(t, 3, 512, ", scheme: bgv")
		sec, dirs := secrets(t, sp)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		_, err := jobtest.Run(ctx, lyingKind{second: tc.second}, sp, jobtest.Options{Secrets: sec})
		cancel()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Fatalf("second=%v: %v, want %q", tc.second, err, tc.want)
		}
		for _, name := range sp.PartyNames() {
			if _, err := keyring.LoadLattice(dirs[name]); err == nil {
				t.Fatalf("%s installed a lattice key", name)
			}
		}
	}
}
