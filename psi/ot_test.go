package psi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// TestOTIntersectRandom: the OT mode gives both parties the plain set
// intersection, whichever side holds which set, over chunked messages.
func TestOTIntersectRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(17, 19))
	for _, c := range []struct {
		na, nb, pool int
		dup          bool
		chunk        int
	}{
		{0, 0, 10, false, 0},
		{0, 5, 10, false, 0},
		{6, 0, 10, false, 0},
		{1, 1, 1, false, 0},
		{20, 30, 40, false, 7},
		{20, 30, 1000000, false, 7}, // most likely no overlap
		{50, 50, 30, true, 7},       // repeats in both inputs
		{64, 64, 64, false, 7},      // both hold every value
		{700, 500, 1000, false, 50}, // several matrix chunks (128 bins each) and value chunks
		{3000, 2500, 6000, false, 0},
	} {
		for _, swap := range []bool{false, true} {
			a, b := randomSets(r, c.na, c.nb, c.pool, c.dup) // drawn in case order, before the cases run in parallel
			t.Run(fmt.Sprintf("%d×%d/pool%d/dup=%v/swap=%v", c.na, c.nb, c.pool, c.dup, swap), func(t *testing.T) {
				t.Parallel()
				a, b := a, b
				if swap {
					a, b = b, a
				}
				net := jobtest.NewNetwork("alice", "bob")
				ra, rb, ea, eb := pair(t, net, OT{Config: Config{Edge: "e", ChunkSize: c.chunk}}, a, b)
				if ea != nil || eb != nil {
					t.Fatal(ea, eb)
				}
				checkResult(t, "alice", ra, a, b)
				checkResult(t, "bob", rb, b, a)
			})
		}
	}
}

// TestOTRehashedTable: a receiver whose cuckoo table came from a later
// attempt (as after a failed insertion) announces it, and the sender
// hashes with that attempt's functions: the result is still exact.
func TestOTRehashedTable(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(23, 29))
	a, b := randomSets(r, 300, 200, 400, false)
	ra, rb, ea, eb := pair(t, jobtest.NewNetwork("alice", "bob"), OT{Config: Config{ChunkSize: 7}, firstAttempt: 3}, a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	checkResult(t, "alice", ra, a, b)
	checkResult(t, "bob", rb, b, a)
}

// TestOTConfigIntersector: Config.Mode picks the protocol.
func TestOTConfigIntersector(t *testing.T) {
	t.Parallel()
	if _, ok := (Config{Mode: ModeOT}).Intersector().(OT); !ok {
		t.Error("ModeOT does not give OT")
	}
	if _, ok := (Config{}).Intersector().(ECDH); !ok {
		t.Error("the zero Mode does not give ECDH")
	}
	net := jobtest.NewNetwork("alice", "bob")
	_, err := OT{Config: Config{Mode: 7}}.Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "bob", Receiver, nil)
	if !errors.Is(err, ErrConfig) {
		t.Errorf("mode 7: %v, want ErrConfig", err)
	}
	for _, role := range []Role{Receiver, Sender} {
		if _, err := (OT{}).Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "alice", role, nil); !errors.Is(err, ErrConfig) {
			t.Errorf("self as peer: %v, want ErrConfig", err)
		}
	}
	if _, err := (OT{}).Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "bob", 0, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("role 0: %v, want ErrConfig", err)
	}
	if _, err := (OT{Config: Config{MaxElements: 1}}).Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "bob", Receiver, [][]byte{{1}, {2}}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v, want ErrTooLarge", err)
	}
}

// TestAlignOT: Align in OT mode gives every party the same result as in
// ECDH mode, with 3 and 4 parties and either hub; the hub sends spokes
// only its OT messages and the filter, and spokes send only to the hub.
func TestAlignOT(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(31, 37))
	three, four := []string{"p1", "p2", "p3"}, []string{"p1", "p2", "p3", "p4"}
	for _, c := range []struct {
		parties []string
		hub     string
		n, pool int
	}{
		{three, "p1", 40, 50}, {three, "p3", 300, 400}, {four, "p1", 300, 400}, {four, "p3", 40, 50}, {three, "p2", 0, 10},
	} {
		parties, hub := c.parties, c.hub
		sets := map[string][][]byte{} // drawn in case order, before the cases run in parallel
		for _, q := range parties {
			sets[q], _ = randomSets(r, c.n, 0, c.pool, q == "p2")
		}
		t.Run(fmt.Sprintf("%d/hub%s/n%d", len(parties), hub, c.n), func(t *testing.T) {
			t.Parallel()
			common := commonSet(parties, sets)
			ecdh, errs := alignAll(t, jobtest.NewNetwork(parties...), hub, parties, sets, Config{Edge: "ids"})
			for _, q := range parties {
				if errs[q] != nil {
					t.Fatalf("ECDH %s: %v", q, errs[q])
				}
			}
			net := jobtest.NewNetwork(parties...)
			for _, q := range parties {
				net.Capture(q)
			}
			ot, errs := alignAll(t, net, hub, parties, sets, Config{Edge: "ids", Mode: ModeOT, ChunkSize: 9})
			for _, q := range parties {
				if errs[q] != nil {
					t.Fatalf("OT %s: %v", q, errs[q])
				}
				if !slices.Equal(ot[q].Indices, ecdh[q].Indices) || ot[q].Size != ecdh[q].Size || ot[q].PeerSize != ecdh[q].PeerSize {
					t.Errorf("%s: OT %+v, ECDH %+v", q, ot[q], ecdh[q])
				}
				if want := plain(sets[q], common); !slices.Equal(ot[q].Indices, want) {
					t.Errorf("%s: OT %v, plain %v", q, ot[q].Indices, want)
				}
				for _, s := range net.Captured(q) {
					if s.Disclosure != wire.DisclosePSIBlinded {
						t.Errorf("%s sends %s with %q", q, s.Message.Type, s.Disclosure)
					}
					if q != hub && (s.To != hub || s.Message.Type == TypeFilter) {
						t.Errorf("spoke %s sends %s to %s", q, s.Message.Type, s.To)
					}
					if q == hub && s.Message.Type == TypeOTValues {
						t.Errorf("the hub sends OPRF values to %s", s.To)
					}
				}
			}
		})
	}
}

// TestOTLeakage captures every message of an OT-mode PSI: only OT and
// filter types, each psi-blinded; no element, digest (as made, or
// re-keyed under the joint seed), 16-byte block of a code word C(x, h), or block of the sender's choice vector s appears in
// clear; the sender's values are shuffled afresh per run.
func TestOTLeakage(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(41, 43))
	a, b := randomSets(r, 200, 200, 300, false)
	in := OT{Config: Config{Edge: "e", ChunkSize: 64}}
	sent := capturedPair(t, in, a, b)
	dg := leakageDigester()
	seed := capturedJointSeed(t, dg, sent, TypeOTBase, TypeOTChoice)
	var forbidden [][]byte
	for _, e := range append(slices.Clone(a), b...) {
		d, rd := seededDigests(dg, seed, e)
		h := sha256.Sum256(e)
		forbidden = append(forbidden, e, d[:], rd[:], h[:16])
	}
	counts := checkBlindedBodies(t, sent, forbidden)
	// The code words depend on the joint seed, which the captured shares
	// give: recompute every C(x, h) and look for its blocks.
	checkNoCodeWordBlocks(t, sent, dg, seed, append(slices.Clone(a), b...))
	// 200 and 200 values: 4 matrix chunks of 128 rows (400 bins rounded
	// up to 512; ChunkSize 64 asks for 32 rows, rounded up to one block),
	// 4 value chunks of 64.
	want := map[string]int{
		"alice psi/ot-base": 1, "alice psi/ot-keys": 1, "alice psi/ot-matrix": 4, "alice psi/filter": 1,
		"bob psi/ot-choice": 1, "bob psi/ot-values": 4,
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("messages sent %v, want %v", counts, want)
	}
	// Shuffled: the positions bob's matched values sit at (the filter's
	// set bits) differ between two runs on the same sets.
	if slices.Equal(otFilterBits(t, sent), otFilterBits(t, capturedPair(t, in, a, b))) {
		t.Error("matched values sit at the same positions in two runs: the sender's values are not shuffled")
	}
}

// capturedPair runs in between alice (the receiver, set a) and bob (b)
// over a fresh network that captures both, and returns every message
// they sent; the sets must share values.
func capturedPair(t *testing.T, in Intersector, a, b [][]byte) []jobtest.Sent {
	t.Helper()
	net := jobtest.NewNetwork("alice", "bob")
	net.Capture("alice")
	net.Capture("bob")
	ra, _, ea, eb := pair(t, net, in, a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	if ra.Size == 0 {
		t.Fatal("no shared values: the test draws too few")
	}
	return append(net.Captured("alice"), net.Captured("bob")...)
}

// leakageDigester is the element digester of capturedPair's exchanges
// (testStep's, edge "e").
func leakageDigester() digester {
	step := testStep("alice", "bob")
	return newDigester(DomainTag(step.Job, step.Phase, step.Round, step.Channel, "e"))
}

// seededDigests is e's digest as the digester makes it, and as both
// parties use it once they hold the joint seed (re-keyed).
func seededDigests(dg digester, seed [32]byte, e []byte) (d, rd [digestLen]byte) {
	d = dg.digests([][]byte{e})[0]
	ds := [][digestLen]byte{d}
	rekey(ds, seed)
	return d, ds[0]
}

// checkBlindedBodies fails if a captured message is not psi-blinded or
// carries any of forbidden at any offset, and returns the messages'
// counts by "sender type".
func checkBlindedBodies(t *testing.T, sent []jobtest.Sent, forbidden [][]byte) map[string]int {
	t.Helper()
	counts := map[string]int{}
	for _, s := range sent {
		if s.Disclosure != wire.DisclosePSIBlinded {
			t.Errorf("%s to %s discloses %q", s.Message.Type, s.To, s.Disclosure)
		}
		counts[s.From+" "+s.Message.Type]++
		for _, f := range forbidden {
			if bytes.Contains(s.Message.Body, f) {
				t.Fatalf("%s from %s carries an element or a value derived from one %x", s.Message.Type, s.From, f)
			}
		}
	}
	return counts
}

// capturedJointSeed is the joint seed of the two seed shares in the
// captured hello messages of types hello (the receiver's and the
// sender's).
func capturedJointSeed(t *testing.T, dg digester, sent []jobtest.Sent, hello ...string) [32]byte {
	t.Helper()
	var shares [][]byte
	for _, s := range sent {
		if slices.Contains(hello, s.Message.Type) {
			var h otHelloBody
			if err := wire.Unmarshal(s.Message.Body, &h); err != nil {
				t.Fatal(err)
			}
			shares = append(shares, h.Seed)
		}
	}
	if len(shares) != 2 {
		t.Fatalf("%d seed shares", len(shares))
	}
	return jointSeed(dg, shares[0], shares[1])
}

// checkNoCodeWordBlocks fails if any 16-byte block of a code word
// C(x, h), for every element x of elems and every hash h under the OT
// keys of the joint seed, appears at any offset of a captured body.
// Split from TestOTLeakage to keep that one short.
func checkNoCodeWordBlocks(t *testing.T, sent []jobtest.Sent, dg digester, seed [32]byte, elems [][]byte) {
	t.Helper()
	keys := newOTKeys(seed)
	windows := map[[16]byte]string{} // every 16 bytes at every offset of every body
	for _, s := range sent {
		for i := 0; i+16 <= len(s.Message.Body); i++ {
			windows[[16]byte(s.Message.Body[i:i+16])] = s.From + " " + s.Message.Type
		}
	}
	row := make([]byte, otRowBytes)
	for _, e := range elems {
		_, d := seededDigests(dg, seed, e)
		for h := range hashCount {
			keys.codeWord(row, &d, h)
			for j := 0; j < otRowBytes; j += 16 {
				if m, ok := windows[[16]byte(row[j:j+16])]; ok {
					t.Fatalf("%s carries a block of a code word", m)
				}
			}
		}
	}
}

// otFilterBits decodes the filter message of a captured OT-mode run: its
// set bits are the positions the receiver's matched values sit at.
func otFilterBits(t *testing.T, sent []jobtest.Sent) []bool {
	t.Helper()
	for _, s := range sent {
		if s.Message.Type == TypeFilter {
			var f filterBody
			_ = wire.Unmarshal(s.Message.Body, &f)
			bits, err := decodeFilter(s.Message.Body, f.Total, f.Echo)
			if err != nil {
				t.Fatal(err)
			}
			return bits
		}
	}
	t.Fatal("no filter")
	return nil
}

// tamperBody returns an interceptor that rewrites the n-th message of
// type typ, decoded as T, with f.
func tamperBody[T any](typ string, n int, f func(*T)) jobtest.Tamper {
	var mu sync.Mutex
	seen := 0
	return func(to string, m *wire.Message) *wire.Message {
		if m.Type != typ {
			return m
		}
		mu.Lock()
		defer mu.Unlock()
		if seen++; seen != n {
			return m
		}
		var body T
		if err := wire.Unmarshal(m.Body, &body); err != nil {
			panic(err)
		}
		f(&body)
		b, err := wire.Marshal(&body)
		if err != nil {
			panic(err)
		}
		m.Body = b
		return m
	}
}

// TestOTRejectsTampering: a peer's malformed OT messages are errors at
// the honest party (ErrPeer, ErrTooLarge or ErrRestarted), never a result
// or a panic, whichever side cheats.
func TestOTRejectsTampering(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(47, 53))
	a, b := randomSets(r, 300, 200, 400, false)
	otherRun := bytes.Repeat([]byte{9}, runIDLen)
	type hello = otHelloBody
	type chunk = otChunkBody
	type keys = otKeysBody
	for name, c := range map[string]struct {
		from   string // the cheating party: alice is the receiver, bob the sender
		tamper jobtest.Tamper
		want   error
	}{
		"base: set too large":     {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { h.Total = 1 << 30 }), ErrTooLarge},
		"base: negative set":      {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { h.Total = -1 }), ErrPeer},
		"base: short seed":        {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { h.Seed = h.Seed[1:] }), ErrPeer},
		"base: short points":      {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { h.Points = h.Points[PointLen:] }), ErrPeer},
		"base: ragged points":     {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { h.Points = h.Points[1:] }), ErrPeer},
		"base: non-canonical":     {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { copy(h.Points[PointLen:], bytes.Repeat([]byte{0xff}, PointLen)) }), ErrPeer},
		"base: identity":          {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { clear(h.Points[:PointLen]) }), ErrPeer},
		"base: short run id":      {"alice", tamperBody(TypeOTBase, 1, func(h *hello) { h.Run = h.Run[1:] }), ErrPeer},
		"choice: set too large":   {"bob", tamperBody(TypeOTChoice, 1, func(h *hello) { h.Total = 1 << 30 }), ErrTooLarge},
		"choice: wrong echo":      {"bob", tamperBody(TypeOTChoice, 1, func(h *hello) { h.Echo = otherRun }), ErrRestarted},
		"choice: long points":     {"bob", tamperBody(TypeOTChoice, 1, func(h *hello) { h.Points = append(h.Points, h.Points[:PointLen]...) }), ErrPeer},
		"keys: short":             {"alice", tamperBody(TypeOTKeys, 1, func(k *keys) { k.Cipher = k.Cipher[otCipherLen:] }), ErrPeer},
		"keys: garbled":           {"alice", tamperBody(TypeOTKeys, 1, func(k *keys) { k.Cipher[12] ^= 1; k.Cipher[otCipherLen+12] ^= 1 }), ErrPeer},
		"keys: other run":         {"alice", tamperBody(TypeOTKeys, 1, func(k *keys) { k.Run = otherRun }), ErrRestarted},
		"matrix: short chunk":     {"alice", tamperBody(TypeOTMatrix, 1, func(c *chunk) { c.Data = c.Data[otRowBytes:] }), ErrPeer},
		"matrix: long chunk":      {"alice", tamperBody(TypeOTMatrix, 2, func(c *chunk) { c.Data = append(c.Data, c.Data[:otRowBytes]...) }), ErrPeer},
		"matrix: ragged chunk":    {"alice", tamperBody(TypeOTMatrix, 1, func(c *chunk) { c.Data = c.Data[1:] }), ErrPeer},
		"matrix: out of order":    {"alice", tamperBody(TypeOTMatrix, 1, func(c *chunk) { c.Index = 1 }), ErrPeer},
		"matrix: huge bin count":  {"alice", tamperBody(TypeOTMatrix, 1, func(c *chunk) { c.Total = 1 << 40 }), ErrPeer},
		"matrix: attempt changes": {"alice", tamperBody(TypeOTMatrix, 2, func(c *chunk) { c.Attempt = 1 }), ErrPeer},
		"matrix: attempt too big": {"alice", tamperBody(TypeOTMatrix, 1, func(c *chunk) { c.Attempt = maxCuckooAttempts }), ErrPeer},
		"matrix: other run":       {"alice", tamperBody(TypeOTMatrix, 2, func(c *chunk) { c.Run = otherRun }), ErrRestarted},
		"matrix: wrong echo":      {"alice", tamperBody(TypeOTMatrix, 1, func(c *chunk) { c.Echo = otherRun }), ErrRestarted},
		"values: short chunk":     {"bob", tamperBody(TypeOTValues, 1, func(c *chunk) { c.Data = c.Data[1:] }), ErrPeer},
		"values: long chunk":      {"bob", tamperBody(TypeOTValues, 2, func(c *chunk) { c.Data = append(c.Data, 0) }), ErrPeer},
		"values: wrong total":     {"bob", tamperBody(TypeOTValues, 1, func(c *chunk) { c.Total++ }), ErrPeer},
		"values: out of order":    {"bob", tamperBody(TypeOTValues, 2, func(c *chunk) { c.Index = 0 }), ErrPeer},
		"values: other run":       {"bob", tamperBody(TypeOTValues, 3, func(c *chunk) { c.Run = otherRun }), ErrRestarted},
		"values: attempt":         {"bob", tamperBody(TypeOTValues, 1, func(c *chunk) { c.Attempt = 2 }), ErrPeer},
		"filter: long":            {"alice", tamperBody(TypeFilter, 1, func(f *filterBody) { f.Bits = append(f.Bits, 0) }), ErrPeer},
		"filter: other run":       {"alice", tamperBody(TypeFilter, 1, func(f *filterBody) { f.Echo = otherRun }), ErrRestarted},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork("alice", "bob")
			net.Intercept(c.from, c.tamper)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			step := testStep("alice", "bob")
			in := OT{Config: Config{ChunkSize: 64, MaxElements: 1000}}
			victim, cheat, role, cheatRole := "bob", "alice", Sender, Receiver
			sv, sc := b, a
			if c.from == "bob" {
				victim, cheat, role, cheatRole = "alice", "bob", Receiver, Sender
				sv, sc = a, b
			}
			res, err := againstCheat(ctx, net, step, victim, cheat, role, cheatRole, in, in, sv, sc)
			wantRefused(t, victim, res, err, c.want)
		})
	}
}

// againstCheat runs the victim's side of an exchange (in, its elements
// sv) against a cheat's (cin, sc) over net, and returns the victim's
// answer. The cheat may wait forever once the victim has given up, so it
// is cancelled then.
func againstCheat(ctx context.Context, net *jobtest.Network, step job.Step, victim, cheat string, role, cheatRole Role, in, cin Intersector, sv, sc [][]byte) (*Result, error) {
	cctx, ccancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = cin.Intersect(cctx, net.Party(cheat), step, victim, cheatRole, sc)
	}()
	res, err := in.Intersect(ctx, net.Party(victim), step, cheat, role, sv)
	ccancel()
	<-done
	return res, err
}

// wantRefused checks a victim's answer to a tampered message: no result,
// the error want, and a peer's malformed message is wire.ErrMalformed to
// the runtime.
func wantRefused(t *testing.T, victim string, res *Result, err, want error) {
	t.Helper()
	if res != nil || !errors.Is(err, want) {
		t.Errorf("%s: %v, %v; want %v", victim, res, err, want)
	}
	if errors.Is(want, ErrPeer) && !errors.Is(err, wire.ErrMalformed) && !errors.Is(err, ErrTooLarge) {
		t.Errorf("%s: %v does not wrap wire.ErrMalformed", victim, err)
	}
}

// TestOTRestartMidExchange: a receiver that restarts after its first
// message comes back with a new run; the sender's answer to the old run
// makes the new receiver fail with ErrRestarted instead of mixing two
// runs' keys. The sender, which answered the old run, waits for that
// run's next message until its context ends (the step's timeout), and the
// coordinator runs the step again.
func TestOTRestartMidExchange(t *testing.T) {
	t.Parallel()
	a := [][]byte{[]byte("x"), []byte("y"), []byte("z")}
	b := [][]byte{[]byte("y"), []byte("z"), []byte("w")}
	net := jobtest.NewNetwork("alice", "bob")
	step := testStep("alice", "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// alice's first run sends its base-OT message and dies.
	_, pts := newBaseSender(otWidth)
	body, err := encodeHello(bytes.Repeat([]byte{1}, runIDLen), nil, len(a), make([]byte, seedLen), pts)
	if err != nil {
		t.Fatal(err)
	}
	if err := net.Party("alice").Send(ctx, "bob", step.Message("alice", TypeOTBase, body), wire.DisclosePSIBlinded); err != nil {
		t.Fatal(err)
	}
	var rb *Result
	var eb error
	bctx, bcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); rb, eb = OT{}.Intersect(bctx, net.Party("bob"), step, "alice", Sender, b) }()
	ra, ea := OT{}.Intersect(ctx, net.Party("alice"), step, "bob", Receiver, a)
	bcancel()
	<-done
	if ra != nil || !errors.Is(ea, ErrRestarted) {
		t.Errorf("alice after her restart: %v, %v; want ErrRestarted", ra, ea)
	}
	if rb != nil || !errors.Is(eb, context.Canceled) {
		t.Errorf("bob: %v, %v; want the end of his context", rb, eb)
	}
}

// TestOTContext: a silent peer makes either role end with the context,
// naming the peer.
func TestOTContext(t *testing.T) {
	t.Parallel()
	for _, role := range []Role{Receiver, Sender} {
		net := jobtest.NewNetwork("alice", "bob")
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		_, err := OT{}.Intersect(ctx, net.Party("alice"), testStep("alice", "bob"), "bob", role, [][]byte{[]byte("x")})
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "bob") {
			t.Errorf("role %d: %v", role, err)
		}
	}
}
