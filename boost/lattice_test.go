package boost_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/keyring"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/wire"
)

// latticeKeys caches one dealt lattice key per set of parties for the
// test binary.
var latticeKeys = struct {
	sync.Mutex
	m map[string]map[string]*lattice.Keys
}{m: map[string]map[string]*lattice.Keys{}}

// latticeCrypto is the lattice path over a key dealt to g's parties, with
// every member's decryption shares made in process.
func latticeCrypto(t testing.TB, g *joinprop.Graph) boost.LatticeCrypto {
	t.Helper()
	var parties []string
	for _, ti := range g.Tables {
		if !slices.Contains(parties, ti.Party) {
			parties = append(parties, ti.Party)
		}
	}
	c, err := boost.LatticeInProcess(g, dealtLattice(t, parties), "boost-test")
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// dealtLattice is a lattice key dealt to the parties, once per test
// binary and set of parties.
func dealtLattice(t testing.TB, parties []string) map[string]*lattice.Keys {
	t.Helper()
	parties = slices.Sorted(slices.Values(parties))
	latticeKeys.Lock()
	defer latticeKeys.Unlock()
	id := fmtParties(parties)
	keys, ok := latticeKeys.m[id]
	if !ok {
		var err error
		if keys, err = keyring.DealLattice(parties, 0); err != nil {
			t.Fatal(err)
		}
		latticeKeys.m[id] = keys
	}
	return keys
}

func fmtParties(ps []string) string {
	out := ""
	for _, p := range ps {
		out += p + "\x00"
	}
	return out
}

// TestLatticeEqualsPlain: on the three-party star with both edges many to
// many, the lattice path's model equals the model in the clear (and so the
// reference booster's), byte for byte as JSON; with one node a layout, the
// third level's two left children (the right ones come from their parents
// by subtraction) take two layouts.
func TestLatticeEqualsPlain(t *testing.T) {
	t.Parallel()
	for _, perLayout := range []int{0, 1} {
		c := starCase(t, 1, 90)
		p := testParams()
		want, err := boost.Train(c.g, c.data, p)
		if err != nil {
			t.Fatal(err)
		}
		got, err := boost.TrainLattice(c.g, c.data, p, boost.WithMaxNodes(latticeCrypto(t, c.g), perLayout))
		if err != nil {
			t.Fatal(err)
		}
		if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
			t.Fatalf("%d nodes a layout: lattice model differs\n got: %s\nwant: %s", perLayout, a, b)
		}
	}
}

// TestLatticeRefusesChain: a table joined to the class holder's through
// another is refused by name, not trained wrongly.
func TestLatticeRefusesChain(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 1, 60)
	_, err := boost.TrainLattice(c.g, c.data, testParams(), latticeCrypto(t, c.g))
	if !errors.Is(err, boost.ErrLatticeStar) {
		t.Fatalf("a chain on the lattice path: %v", err)
	}
}

// TestLatticeDefaultCredit: on FATE's default_credit split the lattice
// path's model equals the model in the clear, byte for byte as JSON (a
// quarter of the training ids and 2 trees by default; BOOST_CREDIT=full or
// every N-th id with BOOST_CREDIT=N, BOOST_TREES and BOOST_DEPTH as
// TestDefaultCredit), and its time and CPU
// per tree are logged (docs/boost.md).
func TestLatticeDefaultCredit(t *testing.T) {
	every, trees := 4, 2
	if v := os.Getenv("BOOST_CREDIT"); v == "full" {
		every = 1
	} else if n, err := strconv.Atoi(v); err == nil && n > 0 {
		every = n // every n-th training id, as BOOST_PAILLIER (the backends' cross-over, docs/boost.md)
	}
	g, train, _ := creditData(t, every)
	p := boost.DefaultParams()
	p.Trees = trees
	if v, err := strconv.Atoi(os.Getenv("BOOST_TREES")); err == nil {
		p.Trees = v
	}
	if v, err := strconv.Atoi(os.Getenv("BOOST_DEPTH")); err == nil {
		p.MaxDepth = v
	}
	c := latticeCrypto(t, g)
	cpu0, t0 := cpuTime(t), time.Now()
	got, err := boost.TrainLattice(g, train, p, c)
	if err != nil {
		t.Fatal(err)
	}
	wall, cpu := time.Since(t0)/time.Duration(p.Trees), (cpuTime(t)-cpu0)/time.Duration(p.Trees)
	t.Logf("default_credit, %d training rows, depth %d, %d bins: %v per tree, CPU %v per tree on the lattice path (one process)",
		train["guest"].NumRows(), p.MaxDepth, p.Bins, wall.Round(time.Millisecond), cpu.Round(time.Millisecond))
	want, err := boost.Train(g, train, p)
	if err != nil {
		t.Fatal(err)
	}
	if a, b := modelJSON(t, *got), modelJSON(t, *want); a != b {
		t.Fatalf("lattice model differs\n got: %s\nwant: %s", a, b)
	}
}

// TestJobStarLattice: the three-party star over real nodes with
// params.backend lattice (and with auto, which picks it for a star whose
// parties all hold the dealt lattice key): the model equals the
// library's, and every message and log record keeps to the leakage
// profile (the lattice path's messages included, and the bins the load
// step commits: carol's table, whose column has fewer bins than
// params.bins, is laid out for its own; two of A's columns share a group
// of positions). Under auto every node keeps at
// most one W (Kind.LatticeCacheBytes), which changes no model.
func TestJobStarLattice(t *testing.T) {
	t.Parallel()
	for _, backend := range []string{boost.BackendLattice, boost.BackendAuto} {
		c := starCase(t, 1, 60)
		p := testParams()
		p.Trees, p.Backend = 2, backend
		lay := layoutBins(t, c, p.Bins)
		if b := lay.parties; b["carol"] >= p.Bins {
			t.Fatalf("carol's column has %d bins of %d: the case lays nothing out for fewer", b["carol"], p.Bins)
		}
		if a := lay.cols["A"]; boost.PackGroups(a, lay.parties["bob"]) >= len(a) {
			t.Fatalf("A's columns of %v bins take a group each: the case packs no two columns together", a)
		}
		// auto's nodes keep at most one W each (boost_lattice_cache_bytes):
		// the model is the same.
		kind := boost.Kind{}
		if backend == boost.BackendAuto {
			_, entry := boost.KeptEntryBytes(latticeCrypto(t, c.g).PK)
			kind.LatticeCacheBytes = entry
		}
		runLatticeJob(t, c, p, kind)
	}
}

// runLatticeJob runs c's job with params p over real nodes of kind k and
// checks that its model equals the library's, that its messages keep to
// the leakage profile and that kept chunks were re-used, some beside
// fresh entries; it returns what was captured.
func runLatticeJob(t *testing.T, c *joinCase, p boost.Params, k boost.Kind) *capture {
	t.Helper()
	return runLatticeJobSeeing(t, c, p, k, seenLatticeReused, seenLatticeMixed)
}

// runLatticeJobSeeing is runLatticeJob requiring the leakage check to
// have seen what seen names (checkLeakageOf's counts), nothing if none.
func runLatticeJobSeeing(t *testing.T, c *joinCase, p boost.Params, k boost.Kind, seen ...string) *capture {
	t.Helper()
	capt, out := &capture{records: map[string]*job.Record{}}, filepath.Join(t.TempDir(), "out")
	if err := simRunKind(t, c, p, k, capt, out); err != nil {
		t.Fatal(err)
	}
	res := readResult(t, out)
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
		t.Fatalf("%s: the job's model differs from the library's\n got: %s\nwant: %s", p.Backend, got, w)
	}
	checkLatticeLeakage(t, c, want, res, out, capt, p.Bins, seen...)
	return capt
}

// TestJobLatticeParts: with down messages of one ciphertext a part, so
// that a table's party sums each part as it comes (lattice_pipe.go), the
// job's model still equals the library's and its messages keep to the
// leakage profile.
func TestJobLatticeParts(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 240)
	p := testParams()
	p.Trees, p.Backend, p.Bins = 1, boost.BackendLattice, 64 // 64 rows a chunk: several chunks, each its own part
	capt := runLatticeJob(t, c, p, boost.WithDownPart(boost.Kind{}, 1))
	parts := 0
	capt.mu.Lock()
	for _, sm := range capt.sent {
		var w latticeMsg
		if sm.Message.Type == boost.TypeLatticeDown && wire.Unmarshal(sm.Message.Body, &w) == nil && w.Part > 0 {
			parts++
		}
	}
	capt.mu.Unlock()
	if parts == 0 {
		t.Fatal("no down message came in more than one part: the test checks nothing")
	}
}

// TestJobLatticeLayouts: with one node a layout, so that the deeper
// levels take several layouts of one node count, and without re-used
// entries, a table's party sums the interleaved down messages as their
// parts come (lattice_pipe.go), parts of one and of up to five ciphertexts
// ending within a chunk's layouts; with re-used entries the layouts' ciphertexts come one
// layout after the other and are summed at once. Either way the model is
// the library's and the messages keep to the leakage profile.
func TestJobLatticeLayouts(t *testing.T) {
	t.Parallel()
	c := starCase(t, 1, 240)
	ct := latticeCrypto(t, c.g).PK.Params.CiphertextBytes()
	for _, tc := range []struct {
		reuse bool
		part  int // the down messages' parts, at most so many ciphertexts
	}{{false, 1}, {false, 5}, {true, 1}} {
		reuse := tc.reuse
		p := testParams()
		p.Trees, p.Backend, p.Bins, p.Reuse = 1, boost.BackendLattice, 64, reuse
		kind := boost.WithDownPart(boost.WithLayoutNodes(boost.Kind{}, 1), tc.part*ct)
		capt := runLatticeJobSeeing(t, c, p, kind)
		seen := false
		capt.mu.Lock()
		for _, sm := range capt.sent {
			var w latticeMsg
			if sm.Message.Type == boost.TypeLatticeDown && wire.Unmarshal(sm.Message.Body, &w) == nil && w.Part == 0 && len(w.Nodes) > 1 && (w.Kept > 0) == reuse {
				seen = true
			}
		}
		capt.mu.Unlock()
		if !seen {
			t.Fatalf("reuse %v: no down message of several layouts, re-used entries %v", reuse, reuse)
		}
	}
}

// TestBackendChoice: params.backend lattice on a chain fails validation
// naming the field; the load step's choice is lattice only for a star
// whose every party holds the key (auto), and lattice asked for with a
// party lacking the key fails naming that party, not a value.
func TestBackendChoice(t *testing.T) {
	t.Parallel()
	chain := chainCase(t, 1, 30)
	spec := writeSpec(t, chain, "chain.yaml", map[string]any{"backend": boost.BackendLattice})
	if err := (boost.Kind{}).Validate(&spec); err == nil || !strings.Contains(err.Error(), "params.backend") {
		t.Fatalf("lattice on a chain: %v", err)
	}
	star := starCase(t, 1, 30)
	all := map[string]bool{"alice": true, "bob": true, "carol": true}
	some := map[string]bool{"alice": true, "bob": true}
	parties := []string{"alice", "bob", "carol"}
	for _, tc := range []struct {
		want  string
		c     *joinCase
		holds map[string]bool
		got   string
	}{
		{boost.BackendPaillier, star, all, boost.BackendPaillier},
		{boost.BackendAuto, star, all, boost.BackendLattice},
		{boost.BackendAuto, star, some, boost.BackendPaillier},
		{boost.BackendAuto, chain, all, boost.BackendPaillier},
		{boost.BackendLattice, star, all, boost.BackendLattice},
	} {
		got, err := boost.ChooseBackend(tc.want, tc.c.g, tc.holds, parties)
		if err != nil || got != tc.got {
			t.Errorf("%s with %v: %s, %v; want %s", tc.want, tc.holds, got, err, tc.got)
		}
	}
	_, err := boost.ChooseBackend(boost.BackendLattice, star.g, some, parties)
	if err == nil || !strings.Contains(err.Error(), "party carol") {
		t.Fatalf("lattice without carol's key: %v", err)
	}
}

// TestLatticeRange: squared loss on labels near 10^6 makes the gradient
// sums of 300 join rows pass half the lattice plaintext modulus (2^57 at
// 2^30 fixed point); the lattice path refuses instead of decrypting
// wrapped sums, and trains the same labels scaled down.
func TestLatticeRange(t *testing.T) {
	t.Parallel()
	for _, scale := range []float64{1e6, 1} {
		T := &caseTable{party: "alice", cols: []string{"k", "x", "y"}, kinds: map[string]string{"k": "key", "x": "numeric", "y": "class"}}
		A := &caseTable{party: "bob", cols: []string{"k", "u"}, kinds: map[string]string{"k": "key", "u": "numeric"}}
		for i := range 300 {
			k := fmt.Sprintf("k%d", i)
			T.rows = append(T.rows, []string{k, num(float64(i % 7)), fmt.Sprintf("%g", scale*float64(i%5))})
			A.rows = append(A.rows, []string{k, num(float64(i % 11))})
		}
		c := newCase(t, map[string]*caseTable{"T": T, "A": A}, []string{"T.k = A.k"})
		p := testParams()
		p.Trees, p.Loss = 1, boost.LossSquared
		_, err := boost.TrainLattice(c.g, c.data, p, latticeCrypto(t, c.g))
		if scale > 1 && !errors.Is(err, boost.ErrLatticeRange) {
			t.Fatalf("labels near %g: %v", scale, err)
		}
		if scale == 1 && err != nil {
			t.Fatalf("labels below 5: %v", err)
		}
	}
}
