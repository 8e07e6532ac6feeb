package sum_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/keytest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/secureagg"
	"github.com/cohortdm/cohort/sum"
	"github.com/cohortdm/cohort/wire"
)

// The same jobs as sum_test.go, run in memory by jobtest.Run with real
// secure aggregation: fast enough to cover faults at every point, and the
// whole log and every message can be checked against the leakage profile.

// inmemKeyBits is the modulus of the keys dealt for in-memory runs: enough
// room for a packed slot of sum's 62-bit values, and fast to deal.
const inmemKeyBits = 512

// inmemJob writes a consortium of n parties (consortium in sum_test.go),
// deals it a threshold key, and returns the spec, options giving each
// party its key share as a node's data dir holds it, the parties and the
// exact total.
func inmemJob(t *testing.T, n int, value func(party, row int) float64) (*job.Spec, jobtest.Options, []string, float64) {
	t.Helper()
	path, names, total := consortium(t, n, "", value)
	spec, opts := inmemSpec(t, path, names)
	return spec, opts, names, total
}

// inmemSpec loads the spec at path and deals its parties a threshold key,
// each share in a data dir of its own.
func inmemSpec(t *testing.T, path string, names []string) (*job.Spec, jobtest.Options) {
	t.Helper()
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	_, keys := keytest.Paillier(t, inmemKeyBits, names)
	opts := jobtest.Options{Secrets: map[string]job.Secrets{}}
	for _, name := range names {
		dir := filepath.Join(t.TempDir(), name)
		if err := keyring.SavePaillier(dir, keys[name]); err != nil {
			t.Fatal(err)
		}
		opts.Secrets[name] = jobtest.DirSecrets(dir)
	}
	return spec, opts
}

func runSum(t *testing.T, spec *job.Spec, opts jobtest.Options) *jobtest.Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	rep, err := jobtest.Run(ctx, sum.Kind{}, spec, opts)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func checkTotal(t *testing.T, res job.Result, want float64) {
	t.Helper()
	if got, _ := res["sum"].(float64); math.Abs(got-want) > 1e-3 {
		t.Fatalf("sum %v, want %v", res["sum"], want)
	}
}

// logOps lists the log's operations with each step's round, attempt and
// coordinator; the runtime's admit phase is left out (package job/runner
// tests it).
func logOps(rep *jobtest.Report) []string {
	var out []string
	for _, e := range rep.Log {
		if e.Step != nil && e.Step.Phase == "admit" || e.Record != nil && e.Record.Step.Phase == "admit" {
			continue
		}
		switch {
		case e.Step != nil:
			out = append(out, fmt.Sprintf("%s %d#%d@%s", e.Op, e.Step.Round, e.Step.Attempt, e.Step.Coordinator))
		case e.Record != nil:
			out = append(out, fmt.Sprintf("%s %d#%d@%s", e.Op, e.Record.Step.Round, e.Record.Step.Attempt, e.Record.Coordinator))
		default:
			out = append(out, e.Op)
		}
	}
	return out
}

func TestInMemSumExact(t *testing.T) {
	t.Parallel()
	for _, n := range []int{3, 5} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			t.Parallel()
			spec, opts, names, want := inmemJob(t, n, randomValue(uint64(n)))
			rep := runSum(t, spec, opts)
			checkTotal(t, rep.Result, want)
			if inc, _ := rep.Result["included"].([]string); !slices.Equal(inc, names) {
				t.Fatalf("included %v, want %v", rep.Result["included"], names)
			}
			if _, ok := rep.Result["excluded"]; ok {
				t.Fatalf("excluded %v with no fault", rep.Result["excluded"])
			}
			ops := []string{"submit", "start 0#1@org01", "done 0#1@org01", "finish"}
			if got := logOps(rep); !slices.Equal(got, ops) {
				t.Fatalf("log %v, want %v", got, ops)
			}
		})
	}
}

// A party whose node is down is found unreachable at once, named, and the
// aggregation re-run without it.
func TestInMemSumDroppedParty(t *testing.T) {
	spec, opts, names, _ := inmemJob(t, 4, func(p, r int) float64 { return float64(p*10 + r) })
	const victim = "org03"
	opts.Network = jobtest.NewNetwork(names...)
	opts.Network.Drop(victim, jobtest.DropFail)
	start := time.Now()
	rep := runSum(t, spec, opts)
	// The step timeout waited out would name the victim silent, not
	// unreachable (below); how soon it was found is only logged, since a
	// loaded machine stretches it.
	t.Logf("took %v with a party down", time.Since(start))
	want := 0.0
	for p, n := range names {
		if n != victim {
			for r := 0; r < 5; r++ {
				want += float64(p*10 + r)
			}
		}
	}
	checkTotal(t, rep.Result, want)
	excl, _ := rep.Result["excluded"].(map[string]string)
	if why := excl[victim]; !strings.Contains(why, "unreachable") {
		t.Fatalf("excluded %v does not name %s as unreachable", excl, victim)
	}
	if inc, _ := rep.Result["included"].([]string); slices.Contains(inc, victim) || len(inc) != 3 {
		t.Fatalf("included %v", inc)
	}
	recs := rep.Records()
	if len(recs) != 2 || !slices.Equal(recs[0].Silent, []string{victim}) || slices.Contains(recs[1].Step.Parties, victim) {
		t.Fatalf("want a round naming %s silent, then one without it; got %+v", victim, recs)
	}
}

// A party that sends a corrupted decryption share is named and excluded
// from decryption; its input stays in the sum, which is still right.
func TestInMemSumTamperedShare(t *testing.T) {
	t.Parallel()
	spec, opts, names, want := inmemJob(t, 5, randomValue(7))
	// org01 leads and so is the root; it asks itself and the next t = 2
	// parties by name for shares, org03 among them.
	const cheat = "org03"
	opts.Network = jobtest.NewNetwork(names...)
	var tampered atomic.Int32
	opts.Network.Intercept(cheat, func(to string, m *wire.Message) *wire.Message {
		if m.Type == "secureagg/share" {
			tampered.Add(1)
			m.Body[len(m.Body)/2] ^= 0x55
		}
		return m
	})
	rep := runSum(t, spec, opts)
	if tampered.Load() == 0 {
		t.Fatal("the cheat was never asked for its share: nothing was tested")
	}
	checkTotal(t, rep.Result, want)
	excl, _ := rep.Result["excluded"].(map[string]string)
	if why := excl[cheat]; !strings.Contains(why, "decryption share") {
		t.Fatalf("excluded %v does not name %s's share", excl, cheat)
	}
	if inc, _ := rep.Result["included"].([]string); len(inc) != 5 {
		t.Fatalf("included %v: the cheat's input belongs in the sum", inc)
	}
}

// A leader change during the aggregation (once the first decryption share
// is on its way to the root) or as it starts re-runs it as a new attempt
// rooted at the new leader; one after it replays the committed decision.
// Either way the total is the same.
func TestInMemSumLeaderChange(t *testing.T) {
	t.Parallel()
	spec, opts, names, want := inmemJob(t, 3, randomValue(11))
	opts.Members = []string{"org04"} // coordinates without taking part
	for _, tc := range []struct {
		name  string
		fault func(o *jobtest.Options)
		to    string
		ops   []string
	}{
		{"during the aggregation", func(o *jobtest.Options) {
			changed := false
			o.OnSend = func(s jobtest.Sent) jobtest.Fault {
				if s.Message.Type == "secureagg/share" && s.Message.Attempt == 1 && !changed {
					changed = true
					return jobtest.Fault{Leader: "org02"}
				}
				return jobtest.Fault{}
			}
		}, "org02", []string{"submit", "start 0#1@org01", "start 0#2@org02", "done 0#2@org02", "finish"}},
		{"as it starts, to a member that takes no part", func(o *jobtest.Options) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Starting && ev.Step.Attempt == 1 {
					return jobtest.Fault{Leader: "org04"}
				}
				return jobtest.Fault{}
			}
		}, "org04", []string{"submit", "start 0#1@org01", "start 0#2@org04", "done 0#2@org04", "finish"}},
		{"after the aggregation", func(o *jobtest.Options) {
			o.OnStep = func(ev jobtest.Event) jobtest.Fault {
				if ev.Kind == jobtest.Committed {
					return jobtest.Fault{Leader: "org03"}
				}
				return jobtest.Fault{}
			}
		}, "org03", []string{"submit", "start 0#1@org01", "done 0#1@org01", "finish"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := opts
			tc.fault(&o)
			rep := runSum(t, spec, o)
			checkTotal(t, rep.Result, want)
			if inc, _ := rep.Result["included"].([]string); !slices.Equal(inc, names) {
				t.Fatalf("included %v", inc)
			}
			if got := logOps(rep); !slices.Equal(got, tc.ops) {
				t.Fatalf("log %v, want %v", got, tc.ops)
			}
			if !slices.Equal(rep.Leaders, []string{"org01", tc.to}) {
				t.Fatalf("leaders %v", rep.Leaders)
			}
		})
	}
}

// Leakage (the profile in sum's package doc): every message any party
// sends is a ciphertext, a decryption share or the public result; no
// message and no log entry carries a party's local sum in any plain
// encoding; no log entry holds a party's output.
func TestInMemSumLeakage(t *testing.T) {
	t.Parallel()
	spec, opts, names, total := inmemJob(t, 3, func(p, r int) float64 { return float64(1000*(p+1)+r) + 0.25 })
	rep := runSum(t, spec, opts)
	checkTotal(t, rep.Result, total)

	if len(rep.Sent) == 0 {
		t.Fatal("captured nothing")
	}
	senders := map[string]bool{}
	for _, s := range rep.Sent {
		senders[s.From] = true
	}
	if len(senders) != len(names) {
		t.Fatalf("captured messages from %v only", senders)
	}
	for _, s := range rep.SentOutside(wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DisclosePublicResult, wire.DiscloseControl) {
		t.Errorf("%s sent %s to %s disclosing %q", s.From, s.Message.Type, s.To, s.Disclosure)
	}
	for _, s := range rep.SentOutside(wire.DiscloseCiphertext, wire.DiscloseDecryptionShare, wire.DisclosePublicResult) {
		// A digest or a commitment: at most two SHA-256 digests in msgpack;
		// a formed notice: one flag.
		control := s.Message.Type == secureagg.TypeDigest || s.Message.Type == secureagg.TypeCommit || s.Message.Type == secureagg.TypeFormed
		if !control || len(s.Message.Body) > 80 {
			t.Errorf("%s sent %s to %s disclosing %q", s.From, s.Message.Type, s.To, s.Disclosure)
		}
	}

	// Each party's local sum, as a float64 (msgpack's encoding of it), in
	// decimal, and as the significant bytes of its fixed-point integer.
	for p, name := range names {
		local := 0.0
		for r := 0; r < 5; r++ {
			local += float64(1000*(p+1)+r) + 0.25
		}
		for _, nd := range encodings(local) {
			for _, s := range rep.SentHolding(nd) {
				t.Errorf("%s's %s to %s carries %s's local sum (%x)", s.From, s.Message.Type, s.To, name, nd)
			}
			for _, e := range rep.LogHolding(nd) {
				t.Errorf("log entry %s carries %s's local sum (%x)", e.Op, name, nd)
			}
		}
	}
	// The same search finds the public total where it belongs: in the
	// committed decision.
	if len(rep.LogHolding(encodings(total)[0])) == 0 {
		t.Error("the total is not found in the log: the search for local sums proves nothing")
	}

	// Outputs reach the coordinator alone and never the log.
	if len(rep.Outputs) != len(names) {
		t.Fatalf("%d outputs, want %d", len(rep.Outputs), len(names))
	}
	for _, o := range rep.Outputs {
		if held := rep.LogHolding(o.Output); len(held) > 0 {
			t.Errorf("log entry %s holds %s's output", held[0].Op, o.Party)
		}
	}
	for _, s := range rep.Sent {
		if s.Message.Type == "job/output" && s.To != rep.Log[1].Step.Coordinator {
			t.Errorf("%s sent its output to %s, not the coordinator", s.From, s.To)
		}
	}
	for _, e := range rep.Log {
		if !slices.Contains([]string{jobtest.OpSubmit, jobtest.OpStart, jobtest.OpDone, jobtest.OpFinish}, e.Op) {
			t.Errorf("log holds a %s entry", e.Op)
		}
	}
}

// encodings returns a value as msgpack encodes a float64 (big-endian
// bits), in decimal, and the six significant bytes of its 16-bit
// fixed-point integer.
func encodings(v float64) [][]byte {
	f := binary.BigEndian.AppendUint64(nil, math.Float64bits(v))
	fixed := binary.BigEndian.AppendUint64(nil, uint64(v*65536))
	return [][]byte{f, []byte(fmt.Sprint(v)), bytes.Clone(fixed[2:])}
}

// A party whose numeric column holds text is excluded with an error that
// names the row and column; the error reaches the log as its reason, so
// it must not carry the cell, and no message may either.
func TestInMemSumBadCellStaysHome(t *testing.T) {
	t.Parallel()
	const secret = "SECRET-4417"
	path, names, _ := consortium(t, 3, "", func(p, r int) float64 { return 1 })
	rewriteTable(t, path, names[2], "id,v\n1,2\n2,"+secret+"\n")
	spec, opts := inmemSpec(t, path, names)
	rep := runSum(t, spec, opts)
	checkTotal(t, rep.Result, 10)
	excl, _ := rep.Result["excluded"].(map[string]string)
	if why := excl[names[2]]; !strings.Contains(why, ".csv:3") || !strings.Contains(why, `column "v"`) {
		t.Fatalf("excluded %v: want %s named with the row and column", excl, names[2])
	}
	if held := rep.LogHolding([]byte(secret)); len(held) > 0 {
		t.Fatalf("the cell value reached the log: %+v", held[0])
	}
	if held := rep.SentHolding([]byte(secret)); len(held) > 0 {
		t.Fatalf("the cell value was sent: %+v", held[0])
	}
}

// params.backend: lattice sums over the lattice key alone (no Paillier key
// is installed), exactly, and a party without the lattice key is dropped,
// named with the key it lacks, and the others re-run without it; a backend that does not exist is refused
// naming the field.
func TestInMemSumLatticeBackend(t *testing.T) {
	t.Parallel()
	path, names, want := consortium(t, 4, ", backend: lattice, timeout_ms: 30000", randomValue(9)) // room for a loaded machine
	spec, err := job.LoadSpec(path)
	if err != nil {
		t.Fatal(err)
	}
	keys := keytest.Lattice(t, names)
	// Fresh data dirs per run: a party remembers a formed total by job id.
	install := func(without string) jobtest.Options {
		opts := jobtest.Options{Secrets: map[string]job.Secrets{}}
		for _, name := range names {
			dir := filepath.Join(t.TempDir(), name)
			if name != without {
				if err := keyring.SaveLattice(dir, keys[name]); err != nil {
					t.Fatal(err)
				}
			}
			opts.Secrets[name] = jobtest.DirSecrets(dir)
		}
		return opts
	}
	rep := runSum(t, spec, install(""))
	checkTotal(t, rep.Result, want)
	if got, _ := rep.Result["sum"].(float64); got != want {
		t.Fatalf("sum %v, want exactly %v", got, want)
	}
	if inc, _ := rep.Result["included"].([]string); !slices.Equal(inc, names) {
		t.Fatalf("included %v", rep.Result["included"])
	}

	rep = runSum(t, spec, install(names[2]))
	excluded, _ := rep.Result["excluded"].(map[string]string)
	if why := excluded[names[2]]; len(excluded) != 1 || !strings.Contains(why, "no consortium lattice key") {
		t.Fatalf("a party without the lattice key: excluded %v", rep.Result["excluded"])
	}

	bad, _, _ := consortium(t, 3, ", backend: rlwe", randomValue(1))
	spec, err = job.LoadSpec(bad)
	if err != nil {
		t.Fatal(err)
	}
	if err := (sum.Kind{}).Validate(spec); err == nil || !strings.Contains(err.Error(), "params.backend") {
		t.Fatalf("backend rlwe: %v", err)
	}
}
