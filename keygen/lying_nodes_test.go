package keygen

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/internal/testkit/nodewatch"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/runner"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/policy"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// The lying coordinators of TestCoordinatorCannotChooseKey and
// TestCoordinatorCannotChooseSeed, and a hostile member of the finish
// step, played over real nodes: libp2p on loopback, Raft, the default
// node policy, pa leading.

// nodeSpec is a small key's job on pa, pb and pc (test key sizes: see
// main_test.go).
const nodeSpec = "kind: keygen\nparties: [{name: pa}, {name: pb}, {name: pc}]\nparams: {bits: 512, batch: 256, chunk: 512}\n"

// nodeTiming bounds a step at a minute (the tests wait on the job's end);
// RunWatched keeps the leader through a loaded moment (2 s Raft timeouts,
// as docs/keygen.md advises for loaded machines), so the refusals name
// the coordinator the test made leader.
var nodeTiming = node.Timing{SendMS: 3000, StepMS: 60000}

// nodeRun is one keygen job run on real nodes, watched (simtest.RunWatched).
type nodeRun struct{ *simtest.Watched }

// runOnNodes runs nodeSpec on pa, pb and pc under the default policy, pa
// leading, with the kind watched as w says; the cluster is closed when it
// returns, so that every capture and store is final.
func runOnNodes(t *testing.T, w nodewatch.Watch) *nodeRun {
	t.Helper()
	r := simtest.RunWatched(t, []string{"pa", "pb", "pc"}, "pa", "keygen", w, []byte(nodeSpec),
		sim.ClusterOptions{TablesDir: t.TempDir(), Timing: nodeTiming, Policy: policy.Default()})
	return &nodeRun{r}
}

// failedAt checks that the job failed at a last step of phase and that no
// member holds a key share (nothing was installed).
func (r *nodeRun) failedAt(t *testing.T, phase string) *runner.StepRecord {
	t.Helper()
	if r.Rec.Status == node.StatusDone || len(r.Rec.Steps) == 0 {
		t.Fatalf("the job is %s after %d steps", r.Rec.Status, len(r.Rec.Steps))
	}
	last := r.Rec.Steps[len(r.Rec.Steps)-1]
	if last.Phase != phase {
		t.Fatalf("the job failed at %s/%d, not at %s: %s", last.Phase, last.Round, phase, r.Rec.Error)
	}
	t.Logf("%s/%d failed: %s", last.Phase, last.Round, r.Rec.Error)
	for _, p := range r.Cluster.Names {
		if _, err := os.Stat(filepath.Join(r.Cluster.DataDir(p), keyring.PaillierShareFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s installed a key share: %v", p, err)
		}
	}
	return last
}

// noShare checks that no key share staged by the job's finish step (its
// secret as bytes, hex or decimal, or its low half) is in the job's failure texts, in any message
// a party sent, in any node's log or in any member's Raft store; it
// returns the members that staged one (none: there is nothing to check).
func (r *nodeRun) noShare(t *testing.T) []string {
	t.Helper()
	var staged []string
	var needles [][]byte
	for _, p := range r.Cluster.Names {
		dirs, err := filepath.Glob(filepath.Join(r.Cluster.DataDir(p), "keys", "keygen", r.ID, "*"))
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range dirs {
			attempt, err := strconv.Atoi(filepath.Base(d))
			if err != nil {
				t.Fatalf("%s: staging directory %s: %v", p, d, err)
			}
			k, err := keyring.ReadStagedPaillier(job.DirSecrets(r.Cluster.DataDir(p)), stageDir(r.ID, attempt))
			if err != nil {
				t.Fatalf("%s's staged key %s: %v", p, d, err)
			}
			// the share as bytes, hex and decimal (a text would format
			// it), and its low half, which a reduction might send alone
			secret := k.Share.Secret.Bytes()
			half := secret[len(secret)/2:]
			needles = append(needles, secret, half, []byte(hex.EncodeToString(secret)), []byte(hex.EncodeToString(half)),
				[]byte(k.Share.Secret.String()))
			staged = append(staged, p)
		}
	}
	r.Capture.Mu.Lock()
	defer r.Capture.Mu.Unlock()
	text := r.Rec.Error + "\n" + strings.Join(r.Capture.Failures, "\n")
	for _, f := range r.Rec.Failures {
		text += "\n" + f
	}
	if len(needles) > 0 && (len(r.Capture.Sent) == 0 || r.Capture.Logs.Len() == 0 || len(r.Capture.Failures) == 0) {
		t.Fatalf("captured %d messages, %d log bytes, %d failures", len(r.Capture.Sent), r.Capture.Logs.Len(), len(r.Capture.Failures))
	}
	var stores [][]byte
	for _, p := range r.Cluster.Names {
		simtest.RaftFiles(t, r.Cluster, p, func(_ string, b []byte) { stores = append(stores, b) })
	}
	for i, nd := range needles {
		holders := 0
		if strings.Contains(text, string(nd)) || bytes.Contains(r.Capture.Logs.Bytes(), nd) {
			holders++
		}
		for _, s := range r.Capture.Sent {
			if bytes.Contains(s.M.Body, nd) {
				holders++
			}
		}
		for _, st := range stores {
			if bytes.Contains(st, nd) {
				holders++
			}
		}
		if holders > 0 {
			t.Errorf("%s's key share (needle %d: bytes, half, hex, hex half, decimal) left it: %d holders", staged[i/5], i%5, holders)
		}
	}
	return staged
}

// TestCoordinatorCannotChooseKey's and TestCoordinatorCannotChooseSeed's
// lying coordinators over real nodes (the package's own evilCoordinator
// and grindingCoordinator as the leader's Coordinate): a finish of another
// search attempt than the committed one, an install of another key than
// the finish step committed, and a forged seed commitment in pb's name.
// Every refuser names the step and coordinator pa and reports no output
// of it; nothing is installed; no staged key share is in any failure,
// message, log or Raft store.
func TestCoordinatorCannotChooseNodes(t *testing.T) {
	t.Parallel()
	all := []string{"pa", "pb", "pc"}
	cases := []struct {
		name     string
		lead     func(context.Context, job.Coordinator) (job.Result, error)
		phase    string
		refusers []string
		staged   []string // the members whose finish step staged a key
	}{
		{"finish another attempt", evilCoordinator{finish: func(a finishArgs) finishArgs { a.Attempt++; return a }, install: same[installArgs]}.Coordinate,
			PhaseFinish, all, nil},
		{"install another key", evilCoordinator{finish: same[finishArgs], install: func(a installArgs) installArgs {
			a.KeyID = bytes.Repeat([]byte{1}, 32)
			return a
		}}.Coordinate, PhaseInstall, all, all},
		{"forged seed commitment", grindingCoordinator{forge: true}.Coordinate, job.PhaseSeedReveal, []string{"pb"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := runOnNodes(t, nodewatch.Watch{Kind: Kind{}, Lead: c.lead})
			last := r.failedAt(t, c.phase)
			r.Refused(t, last.Phase, last.Round, c.refusers, "party PARTY refuses "+c.phase, "coordinator pa")
			r.Undisclosed(t, last.Phase, last.Round, c.refusers, "pa")
			if staged := r.noShare(t); !slices.Equal(staged, c.staged) {
				t.Errorf("staged keys at %v, want %v", staged, c.staged)
			}
		})
	}
}

// badProof is a member that sends, in the finish step's test decryption
// (round check), a decryption share whose proof is not its own: the
// response's last bit flipped, which keeps the share well formed.
func badProof(m *wire.Message) *wire.Message {
	if m.Type != msgType || m.Phase != PhaseFinish || m.Channel != "check" {
		return m
	}
	cp := *m
	cp.Body = bytes.Clone(m.Body)
	cp.Body[len(cp.Body)-1] ^= 1
	return &cp
}

// A member (pb) whose test decryption share does not verify fails the
// finish step over real nodes: pa and pc refuse it naming the round and
// pb by its name, which the job's members know it by (its index among
// the sorted names is the protocol's business), and report no key id;
// nothing is installed; the key pb staged (its own step succeeded) is in
// no failure, message, log or Raft store.
func TestHostileMemberNodes(t *testing.T) {
	t.Parallel()
	r := runOnNodes(t, nodewatch.Watch{Kind: Kind{}, Corrupter: "pb", Corrupt: badProof})
	last := r.failedAt(t, PhaseFinish)
	r.Refused(t, last.Phase, last.Round, []string{"pa", "pc"}, "round check, party pb:", "proof does not verify")
	for _, p := range []string{"pa", "pc"} {
		if why := r.Rec.Failures[p]; strings.Contains(why, "round check, party 2") {
			t.Errorf("%s's failure names pb by its index: %s", p, why)
		}
	}
	// pa and pc sent each other their test decryption shares before pb's
	// failed to verify: their outputs alone are checked.
	r.NoOutput(t, last.Phase, last.Round, []string{"pa", "pc"}, "pa")
	if staged := r.noShare(t); !slices.Equal(staged, []string{"pb"}) {
		t.Errorf("staged keys at %v, want pb's alone", staged)
	}
}
