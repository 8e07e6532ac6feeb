package keygen

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/paillier"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/wire"
)

func spec(t *testing.T, n, bits int, extra string) *job.Spec {
	t.Helper()
	var b strings.Builder
	b.WriteString("kind: keygen\nparties:\n")
	for i := range n {
		b.WriteString("  - name: p" + string(rune('a'+i)) + "\n")
	}
	b.WriteString("params: {bits: " + big.NewInt(int64(bits)).String() + extra + "}\n")
	s, err := job.ParseSpec([]byte(b.String()), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func secrets(t *testing.T, s *job.Spec) (map[string]job.Secrets, map[string]string) {
	sec, dirs := map[string]job.Secrets{}, map[string]string{}
	for _, name := range s.PartyNames() {
		dirs[name] = t.TempDir()
		sec[name] = job.DirSecrets(dirs[name])
	}
	return sec, dirs
}

// TestKeygen generates keys with 3 and 5 in-memory parties, checks that
// every party installed the same key, that t+1 shares decrypt with proofs
// that verify, and the leakage profile.
func TestKeygen(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 5} {
		t.Run(big.NewInt(int64(n)).String(), func(t *testing.T) {
			sp := spec(t, n, 512, ", batch: 256, chunk: 512")
			sec, dirs := secrets(t, sp)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
			defer cancel()
			rep, err := jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("result: %v", rep.Result)
			var keys []*secureagg.Keys
			for _, name := range sp.PartyNames() {
				k, err := keyring.LoadPaillier(dirs[name])
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				keys = append(keys, k)
				b, err := os.ReadFile(filepath.Join(dirs[name], keyring.PaillierInfoFile))
				if err != nil {
					t.Fatal(err)
				}
				info, err := keyring.ParseInfo(b)
				if err != nil || info.Made != keyring.MadeDealerless {
					t.Fatalf("%s: info %+v, %v", name, info, err)
				}
			}
			pk := keys[0].Public()
			if rep.Result["key_id"] != hexID(pk.KeyID) || pk.N.BitLen() != 512 || pk.Threshold != (n-1)/2 {
				t.Fatalf("result %v does not describe key %x", rep.Result, pk.KeyID)
			}
			for i, k := range keys {
				if k.Public().KeyID != pk.KeyID || k.Share.Index != i+1 {
					t.Fatalf("party %d holds key %x share %d", i+1, k.Public().KeyID, k.Share.Index)
				}
			}
			decryptWith(t, pk, keys)
			checkLeakage(t, rep, sp, keys)
		})
	}
}

func hexID(id [32]byte) string { return strings.ToLower(bytesHex(id[:])) }

func bytesHex(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

// decryptWith decrypts with every window of t+1 consecutive shares, each
// share's proof verified.
func decryptWith(t *testing.T, pk *paillier.ThresholdPublicKey, keys []*secureagg.Keys) {
	t.Helper()
	m := big.NewInt(123456789)
	c, err := pk.Encrypt(rand.Reader, m)
	if err != nil {
		t.Fatal(err)
	}
	cs := []*paillier.Ciphertext{c}
	ctx := paillier.ProofContext{Job: "test", Phase: "decrypt"}
	n := len(keys)
	for start := range n {
		var shares []*paillier.DecryptionShare
		for k := range pk.Threshold + 1 {
			ks := keys[(start+k)%n].Share
			ds, err := ks.DecryptShare(rand.Reader, cs, ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := pk.VerifyShare(cs, ds, ctx); err != nil {
				t.Fatalf("share %d: %v", ks.Index, err)
			}
			shares = append(shares, ds)
		}
		got, err := pk.Combine(cs, shares)
		if err != nil || got[0].Cmp(m) != 0 {
			t.Fatalf("decryption from shares starting at %d: %v, %v", start+1, got, err)
		}
	}
}

// checkLeakage: every message is a keygen round message with one of the
// two keygen disclosures (or runtime control), or an output to the
// coordinator, a public result: the joint seed's commitments and openings,
// which the log holds too and which no message carries before every
// commitment is committed (jobtest's CheckJointSeed); and no party's key
// share appears in any message or log record.
func checkLeakage(t *testing.T, rep *jobtest.Report, sp *job.Spec, keys []*secureagg.Keys) {
	t.Helper()
	if _, err := rep.CheckJointSeed(jointSeed(rep.JobID, sp)); err != nil {
		t.Fatalf("the joint seed: %v", err)
	}
	if bad := rep.SentOutside(DiscloseShares, DiscloseBiprimality, wire.DisclosePublicResult, wire.DiscloseControl); len(bad) > 0 {
		t.Fatalf("%d messages outside the profile, first %s→%s %s (%s)", len(bad), bad[0].From, bad[0].To, bad[0].Message.Type, bad[0].Disclosure)
	}
	for _, k := range keys {
		secret := k.Share.Secret.Bytes()
		if len(rep.SentHolding(secret)) > 0 || len(rep.LogHolding(secret)) > 0 {
			t.Fatalf("share %d left its party", k.Share.Index)
		}
		// nor its low half, which a reduction might have sent on its own
		half := secret[len(secret)/2:]
		if len(rep.SentHolding(half)) > 0 || len(rep.LogHolding(half)) > 0 {
			t.Fatalf("half of share %d left its party", k.Share.Index)
		}
	}
	for _, s := range rep.Sent {
		if s.Disclosure == DiscloseShares || s.Disclosure == DiscloseBiprimality {
			if s.Message.Type != msgType {
				t.Fatalf("message type %q", s.Message.Type)
			}
		}
	}
}

// TestKeygenDrop crashes a party in the middle of generation (after its
// tenth keygen message): the job fails naming it and no party installs a
// key.
func TestKeygenDrop(t *testing.T) {
	t.Parallel()
	sp := spec(t, 3, 512, ", batch: 64, chunk: 256, timeout_ms: 20000")
	sec, dirs := secrets(t, sp)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	net := jobtest.NewNetwork(sp.PartyNames()...)
	sent := 0
	_, err := jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec, Network: net,
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			if s.From == "pb" && s.Message.Type == msgType {
				if sent++; sent == 10 {
					net.Drop("pb", jobtest.DropFail)
				}
			}
			return jobtest.Fault{}
		},
	})
	if err == nil {
		t.Fatal("generation succeeded without party pb")
	}
	if !strings.Contains(err.Error(), "pb") {
		t.Fatalf("error does not name the dropped party: %v", err)
	}
	for name, dir := range dirs {
		if _, err := os.Stat(filepath.Join(dir, keyring.PaillierShareFile)); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%s has a key share after a failed generation: %v", name, err)
		}
	}
	t.Logf("error: %v", err)
}

// TestKeygenLeaderChange moves the coordinator in the middle of
// generation: the new leader re-runs the generate step as a new attempt,
// which starts over from a fresh seed, and every party installs the key of
// that attempt.
func TestKeygenLeaderChange(t *testing.T) {
	t.Parallel()
	sp := spec(t, 3, 512, ", batch: 64, chunk: 256")
	sec, dirs := secrets(t, sp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	sent := 0
	rep, err := jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec,
		OnSend: func(s jobtest.Sent) jobtest.Fault {
			if s.Message.Type == msgType && s.Message.Attempt == 1 {
				if sent++; sent == 30 {
					return jobtest.Fault{Leader: "pc"}
				}
			}
			return jobtest.Fault{}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Leaders) < 2 {
		t.Fatalf("leaders %v: no leader change happened", rep.Leaders)
	}
	rerun := false
	for _, r := range rep.Records() {
		if r.Step.Attempt > 1 && (r.Step.Phase == PhaseSearch || r.Step.Phase == PhaseFinish) {
			rerun = true
		}
	}
	if !rerun {
		t.Fatal("no step was re-run after the leader change")
	}
	var id [32]byte
	for i, name := range sp.PartyNames() {
		k, err := keyring.LoadPaillier(dirs[name])
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			id = k.Public().KeyID
		} else if k.Public().KeyID != id {
			t.Fatalf("%s holds another key", name)
		}
	}
}

// outcome is what a round hands decide when pa sent a and pb sent b:
// their decoded outputs, or their failure where the bytes do not decode.
func outcome[O any](a, b []byte) *job.Outcome[O] {
	o := &job.Outcome[O]{Results: map[string]O{}, Failed: map[string]string{}}
	for p, out := range map[string][]byte{"pa": a, "pb": b} {
		var v O
		if err := wire.Unmarshal(out, &v); err != nil {
			o.Failed[p] = err.Error()
			continue
		}
		o.Results[p] = v
	}
	return o
}

// FuzzDecideSearch: the coordinator's reading of party outputs never
// panics on arbitrary bytes and accepts only agreeing outputs.
func FuzzDecideSearch(f *testing.F) {
	good, _ := wire.Marshal(searchOutput{Attempt: 1, Tried: 64, N: []byte{1, 2}, TimingMS: map[string]int64{"sieve": 3}})
	f.Add(good, good)
	f.Add([]byte{0x93, 1, 2}, good)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		_, err := decideSearch(outcome[searchOutput](a, b), []string{"pa", "pb"}, true)
		if err == nil && string(a) != string(b) {
			var oa, ob searchOutput
			if wire.Unmarshal(a, &oa) != nil || wire.Unmarshal(b, &ob) != nil || string(oa.N) != string(ob.N) || oa.Attempt != ob.Attempt || oa.Tried != ob.Tried {
				t.Fatalf("accepted disagreeing outputs %x and %x", a, b)
			}
		}
	})
}

// FuzzDecideFinish: as FuzzDecideSearch for the finish step.
func FuzzDecideFinish(f *testing.F) {
	good, _ := wire.Marshal(finishOutput{Attempt: 1, KeyID: make([]byte, 32)})
	f.Add(good, good)
	f.Fuzz(func(t *testing.T, a, b []byte) {
		_, err := decideFinish(outcome[finishOutput](a, b), []string{"pa", "pb"})
		if err == nil {
			var oa, ob finishOutput
			if wire.Unmarshal(a, &oa) != nil || wire.Unmarshal(b, &ob) != nil || string(oa.KeyID) != string(ob.KeyID) || len(oa.KeyID) != 32 {
				t.Fatalf("accepted outputs %x and %x", a, b)
			}
		}
	})
}

// FuzzInstallArgs: the install step's arguments decode strictly or fail,
// and the log's replay never panics on a committed decision.
func FuzzInstallArgs(f *testing.F) {
	good, _ := wire.Marshal(installArgs{Attempt: 2, KeyID: make([]byte, 32)})
	f.Add(good)
	f.Add([]byte{0x82})
	f.Fuzz(func(t *testing.T, b []byte) {
		pq := []string{"pa", "pb"}
		drawn := []*job.Record{{Step: job.Step{Phase: job.PhaseSeedCommit, Parties: pq, Attempt: 1}, Decision: b},
			{Step: job.Step{Phase: job.PhaseSeedReveal, Parties: pq, Attempt: 1}, Decision: b}}
		for _, phase := range []string{PhaseSearch, PhaseFinish, PhaseInstall} {
			_, _ = expect(pq, append(drawn, &job.Record{Step: job.Step{Phase: phase, Parties: pq, Attempt: 1}, Decision: b}))
		}
		a, err := installRound.Args(job.Step{Phase: PhaseInstall, Args: b})
		if err != nil || a.check() != nil {
			return
		}
		if a.Attempt < 1 || len(a.KeyID) != 32 {
			t.Fatalf("accepted %+v", a)
		}
	})
}

// TestSumWithGeneratedKey runs the sum job (secure aggregation, threshold
// decryption with verified share proofs) on the key keygen installed, as
// it would on a dealt key.
func TestSumWithGeneratedKey(t *testing.T) {
	t.Parallel()
	sp := spec(t, 3, 512, ", batch: 256, chunk: 1024")
	sec, _ := secrets(t, sp)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	if _, err := jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec}); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var b strings.Builder
	b.WriteString("kind: sum\nparties:\n")
	want := 0.0
	for i, name := range sp.PartyNames() {
		csv := fmt.Sprintf("v\n%d\n%d\n", 10*(i+1), i+1)
		want += float64(11 * (i + 1))
		if err := os.WriteFile(filepath.Join(dir, name+".csv"), []byte(csv), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "  - name: %s\n    tables: [{name: T, path: %s.csv}]\n", name, name)
	}
	b.WriteString("schema: {T: {v: numeric}}\nparams: {column: v}\n")
	sumSpec, err := job.ParseSpec([]byte(b.String()), dir)
	if err != nil {
		t.Fatal(err)
	}
	rep, err := jobtest.Run(ctx, sum.Kind{}, sumSpec, jobtest.Options{Secrets: sec, TablesDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := rep.Result["sum"].(float64); got != want {
		t.Fatalf("sum %v, want %v", rep.Result["sum"], want)
	}
}

// TestKeygenLostMessage loses one message of the first search step (as the
// runtime may when a message arrives just as its node applies the job): the
// step stalls until its timeout, the next search step runs, and the key is
// generated. A party that hangs in every step still aborts the job.
func TestKeygenLostMessage(t *testing.T) {
	t.Parallel()
	sp := spec(t, 3, 512, ", batch: 64, chunk: 256, timeout_ms: 3000")
	sec, dirs := secrets(t, sp)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	net := jobtest.NewNetwork(sp.PartyNames()...)
	var lost atomic.Bool
	net.Intercept("pb", func(to string, m *wire.Message) *wire.Message {
		if m.Type == msgType && m.Round == 0 && m.Channel == "seeds" && to == "pc" && lost.CompareAndSwap(false, true) {
			return nil
		}
		return m
	})
	rep, err := jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec, Network: net, Grace: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if !lost.Load() {
		t.Fatal("no message was lost")
	}
	if _, err := keyring.LoadPaillier(dirs["pa"]); err != nil {
		t.Fatal(err)
	}
	t.Logf("result %v", rep.Result)

	sp = spec(t, 3, 512, ", batch: 64, chunk: 256, timeout_ms: 1000")
	sec, _ = secrets(t, sp)
	net = jobtest.NewNetwork(sp.PartyNames()...)
	net.Drop("pb", jobtest.DropHang)
	_, err = jobtest.Run(ctx, Kind{}, sp, jobtest.Options{Secrets: sec, Network: net, Grace: 500 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "pb") {
		t.Fatalf("a hung party: %v", err)
	}
	t.Logf("hung party: %v", err)
}
