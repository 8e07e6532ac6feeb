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

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

func testStep(parties ...string) job.Step {
	return job.Step{Job: "job-7", Phase: "psi", Round: 1, Attempt: 1, Parties: parties, Coordinator: parties[0], TimeoutMS: 60000}
}

// plain returns the positions in a whose value is in b: the answer a PSI
// must give.
func plain(a, b [][]byte) []int {
	in := map[string]bool{}
	for _, e := range b {
		in[string(e)] = true
	}
	out := []int{}
	for i, e := range a {
		if in[string(e)] {
			out = append(out, i)
		}
	}
	return out
}

func distinctCount(a [][]byte) int {
	u, _ := distinct(a)
	return len(u)
}

// pair runs Intersect at alice (Receiver) and bob (Sender) at once.
func pair(t testing.TB, net *jobtest.Network, in Intersector, a, b [][]byte) (*Result, *Result, error, error) {
	t.Helper()
	return pairWith(t, net, in, in, a, b)
}

// pairWith is pair with Intersector ia at alice and ib at bob.
func pairWith(t testing.TB, net *jobtest.Network, ia, ib Intersector, a, b [][]byte) (*Result, *Result, error, error) {
	t.Helper()
	// Two minutes, plus a millisecond per element for the benchmarks'
	// million-element sets on a loaded machine.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(len(a)+len(b))*time.Millisecond)
	defer cancel()
	step := testStep("alice", "bob")
	var ra, rb *Result
	var ea, eb error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); ra, ea = ia.Intersect(ctx, net.Party("alice"), step, "bob", Receiver, a) }()
	go func() { defer wg.Done(); rb, eb = ib.Intersect(ctx, net.Party("bob"), step, "alice", Sender, b) }()
	wg.Wait()
	return ra, rb, ea, eb
}

// randomSets draws a set of na and one of nb elements from a pool of
// pool values, with repeats when dup.
func randomSets(r *rand.Rand, na, nb, pool int, dup bool) ([][]byte, [][]byte) {
	draw := func(n int) [][]byte {
		out := make([][]byte, 0, n)
		seen := map[int]bool{}
		for len(out) < n {
			v := r.IntN(pool)
			if seen[v] && !dup {
				continue
			}
			seen[v] = true
			out = append(out, []byte(fmt.Sprintf("value-%d", v)))
		}
		return out
	}
	return draw(na), draw(nb)
}

func checkResult(t *testing.T, who string, got *Result, mine, theirs [][]byte) {
	t.Helper()
	want := plain(mine, theirs)
	if !slices.Equal(got.Indices, want) {
		t.Errorf("%s: indices %v, want %v", who, got.Indices, want)
	}
	if w := distinctCount(theirs); got.PeerSize != w {
		t.Errorf("%s: peer size %d, want %d", who, got.PeerSize, w)
	}
	sub := make([][]byte, 0, len(want))
	for _, i := range want {
		sub = append(sub, mine[i])
	}
	if w := distinctCount(sub); got.Size != w {
		t.Errorf("%s: size %d, want %d", who, got.Size, w)
	}
}

func TestIntersectRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(7, 11))
	for _, c := range []struct {
		na, nb, pool int
		dup          bool
	}{
		{0, 0, 10, false},
		{0, 5, 10, false},
		{6, 0, 10, false},
		{1, 1, 1, false},
		{20, 30, 40, false},
		{20, 30, 1000000, false}, // most likely an empty intersection
		{50, 50, 30, true},       // repeats in both inputs
		{200, 150, 300, false},
		{64, 64, 64, false}, // both hold every value
	} {
		a, b := randomSets(r, c.na, c.nb, c.pool, c.dup) // drawn in case order, before the cases run in parallel
		t.Run(fmt.Sprintf("%d×%d/pool%d/dup=%v", c.na, c.nb, c.pool, c.dup), func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork("alice", "bob")
			// Chunks of 7 put most sets over several messages.
			ra, rb, ea, eb := pair(t, net, ECDH{Config: Config{Edge: "e", ChunkSize: 7}}, a, b)
			if ea != nil || eb != nil {
				t.Fatal(ea, eb)
			}
			checkResult(t, "alice", ra, a, b)
			checkResult(t, "bob", rb, b, a)
		})
	}
}

func TestIntersectEmptyIntersection(t *testing.T) {
	t.Parallel()
	a := [][]byte{[]byte("a"), []byte("b")}
	b := [][]byte{[]byte("c"), []byte("d"), []byte("e")}
	ra, rb, ea, eb := pair(t, jobtest.NewNetwork("alice", "bob"), ECDH{}, a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	if len(ra.Indices) != 0 || ra.Size != 0 || ra.PeerSize != 3 || len(rb.Indices) != 0 || rb.PeerSize != 2 {
		t.Errorf("alice %+v, bob %+v", ra, rb)
	}
}

// TestIntersectCompositeKeys: join keys read from two tables written
// differently (1.50 against 1.5, 007 against 7) meet; the text "1" and
// the number 1 do not.
func TestIntersectCompositeKeys(t *testing.T) {
	t.Parallel()
	key := func(id, branch, amount string) []byte {
		return mustKey(t, mustNum(t, id), mustText(t, branch), mustNum(t, amount))
	}
	a := [][]byte{key("7", "north", "1.50"), key("8", "south", "2"), key("9", "west", "0.1"), key("7", "north", "1.5")}
	b := [][]byte{key("007", "north", "1.5"), key("8", "South", "2"), key("9", "west", "0.10"), key("10", "x", "1")}
	ra, rb, ea, eb := pair(t, jobtest.NewNetwork("alice", "bob"), ECDH{Config: Config{Edge: "T.id,branch,amount"}}, a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	if !slices.Equal(ra.Indices, []int{0, 2, 3}) || ra.Size != 2 || ra.PeerSize != 4 {
		t.Errorf("alice: %+v", ra)
	}
	if !slices.Equal(rb.Indices, []int{0, 2}) || rb.Size != 2 || rb.PeerSize != 3 {
		t.Errorf("bob: %+v", rb)
	}
	text := [][]byte{mustKey(t, mustText(t, "1"))}
	num := [][]byte{mustKey(t, IntValue(1))}
	ra, _, ea, eb = pair(t, jobtest.NewNetwork("alice", "bob"), ECDH{}, text, num)
	if ea != nil || eb != nil || len(ra.Indices) != 0 {
		t.Errorf("text 1 meets number 1: %+v %v %v", ra, ea, eb)
	}
}

// TestIntersectLarge runs sets of a few thousand over the default chunk
// size of 1000.
func TestIntersectLarge(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("a few seconds of CPU")
	}
	r := rand.New(rand.NewPCG(3, 4))
	a, b := randomSets(r, 3000, 2500, 6000, false)
	ra, rb, ea, eb := pair(t, jobtest.NewNetwork("alice", "bob"), ECDH{Config: Config{ChunkSize: 1000}}, a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	checkResult(t, "alice", ra, a, b)
	checkResult(t, "bob", rb, b, a)
	if len(ra.Indices) < 500 {
		t.Errorf("only %d shared values: the test draws too few", len(ra.Indices))
	}
}

// TestLeakage captures every message both parties send and checks them
// against the leakage profile: only psi message types, each with the psi
// disclosure, bodies of blinded points only (no element, no hash of one, no
// unblinded H(x)), the blinded set not in input order, and fresh blinding
// per run.
func TestLeakage(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 6))
	a, b := randomSets(r, 40, 40, 60, false)
	in := ECDH{Config: Config{Edge: "e", ChunkSize: 16}}
	sent := capturedPair(t, in, a, b)
	step := testStep("alice", "bob")
	dst := DomainTag(step.Job, step.Phase, step.Round, step.Channel, "e")
	var forbidden [][]byte
	for _, e := range append(slices.Clone(a), b...) {
		h := sha256.Sum256(e)
		p, err := group.Ristretto255.HashToElement(e, dst).MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		forbidden = append(forbidden, e, h[:], p)
	}
	counts := checkBlindedBodies(t, sent, forbidden)
	var blinded [][]byte // alice's blinded set, as sent
	for _, s := range sent {
		var body chunkBody
		if err := wire.Unmarshal(s.Message.Body, &body); err != nil {
			t.Fatalf("%s: %v", s.Message.Type, err)
		}
		if body.Total != 40 {
			t.Errorf("%s says %d elements", s.Message.Type, body.Total)
		}
		if s.From == "alice" && s.Message.Type == TypeBlinded {
			for i := 0; i < len(body.Elems); i += PointLen {
				blinded = append(blinded, body.Elems[i:i+PointLen])
			}
		}
	}
	want := map[string]int{"alice psi/blinded": 3, "alice psi/double": 3, "bob psi/blinded": 3, "bob psi/double": 3}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("messages sent %v, want %v", counts, want)
	}
	// Shuffled: we cannot unblind, but if the blinded set were sent in
	// input order, the values alice shares with bob (found by matching the
	// double-blinded values both sent) would sit at the same positions in
	// every run. Two runs must differ (a chance of about 1/C(40,k) not to).
	positions := func(sent []jobtest.Sent) []int {
		var mineD, theirsD []Point
		for _, s := range sent {
			var body chunkBody
			_ = wire.Unmarshal(s.Message.Body, &body)
			var pts []Point
			for i := 0; i < len(body.Elems); i += PointLen {
				var p Point
				copy(p[:], body.Elems[i:])
				pts = append(pts, p)
			}
			switch {
			case s.From == "bob" && s.Message.Type == TypeDouble:
				mineD = append(mineD, pts...) // alice's set, doubled, in alice's sent order
			case s.From == "alice" && s.Message.Type == TypeDouble:
				theirsD = append(theirsD, pts...)
			}
		}
		return Match(mineD, theirsD)
	}
	p1, p2 := positions(sent), positions(capturedPair(t, in, a, b))
	if len(p1) == 0 {
		t.Fatal("no shared values: the test draws too few")
	}
	if slices.Equal(p1, p2) {
		t.Errorf("shared values sit at the same positions in two runs (%v): the blinded set is not shuffled", p1)
	}
	// Fresh secrets: no blinded value of one run appears in the other.
	again := capturedPair(t, in, a, b)
	for _, s := range again {
		for _, p := range blinded {
			if bytes.Contains(s.Message.Body, p) {
				t.Fatal("a blinded value repeats across runs: secrets are reused")
			}
		}
	}
}

// tamper returns an interceptor that rewrites bob's n-th message of type
// typ with f.
func tamper(typ string, n int, f func(*chunkBody)) jobtest.Tamper {
	return tamperBody(typ, n, f)
}

// TestIntersectRejectsTampering: a cheating peer's malformed messages are
// errors at the honest party (ErrPeer or ErrTooLarge), never a result or a
// panic.
func TestIntersectRejectsTampering(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(8, 9))
	a, b := randomSets(r, 10, 10, 15, false)
	nonCanonical := func(body *chunkBody) {
		copy(body.Elems[PointLen:], bytes.Repeat([]byte{0xff}, PointLen))
	}
	for name, c := range map[string]struct {
		typ  string
		n    int
		f    func(*chunkBody)
		want error
	}{
		"non-canonical point":  {TypeBlinded, 1, nonCanonical, ErrPeer},
		"identity":             {TypeBlinded, 2, func(b *chunkBody) { clear(b.Elems[:PointLen]) }, ErrPeer},
		"repeat in a chunk":    {TypeBlinded, 1, func(b *chunkBody) { copy(b.Elems[PointLen:], b.Elems[:PointLen]) }, ErrPeer},
		"repeat across chunks": {TypeBlinded, 2, func(b *chunkBody) { b.Elems = slices.Clone(b.Elems) }, nil}, // set below
		"short chunk":          {TypeBlinded, 1, func(b *chunkBody) { b.Elems = b.Elems[:len(b.Elems)-PointLen] }, ErrPeer},
		"long chunk":           {TypeBlinded, 1, func(b *chunkBody) { b.Elems = append(b.Elems, b.Elems[:PointLen]...) }, ErrPeer},
		"ragged bytes":         {TypeBlinded, 1, func(b *chunkBody) { b.Elems = b.Elems[:len(b.Elems)-1] }, ErrPeer},
		"chunk out of order":   {TypeBlinded, 1, func(b *chunkBody) { b.Index = 1 }, ErrPeer},
		"total changes":        {TypeBlinded, 2, func(b *chunkBody) { b.Total = 11 }, ErrPeer},
		"total too large":      {TypeBlinded, 1, func(b *chunkBody) { b.Total = 1 << 30 }, ErrTooLarge},
		"negative total":       {TypeBlinded, 1, func(b *chunkBody) { b.Total = -1 }, ErrPeer},
		"double repeats":       {TypeDouble, 1, func(b *chunkBody) { copy(b.Elems[PointLen:], b.Elems[:PointLen]) }, ErrPeer},
		"double wrong total":   {TypeDouble, 1, func(b *chunkBody) { b.Total = 9 }, ErrPeer},
		"double short":         {TypeDouble, 2, func(b *chunkBody) { b.Elems = b.Elems[PointLen:] }, ErrPeer},
		"double out of order":  {TypeDouble, 2, func(b *chunkBody) { b.Index = 0 }, ErrPeer},
		"double non-canonical": {TypeDouble, 1, nonCanonical, nil}, // not decoded: cannot match anything
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork("alice", "bob")
			if name == "repeat across chunks" {
				// The second chunk's first element repeats the first chunk's.
				var first []byte
				var mu sync.Mutex
				net.Intercept("bob", func(to string, m *wire.Message) *wire.Message {
					if m.Type != TypeBlinded {
						return m
					}
					mu.Lock()
					defer mu.Unlock()
					var body chunkBody
					_ = wire.Unmarshal(m.Body, &body)
					if body.Index == 0 {
						first = slices.Clone(body.Elems[:PointLen])
						return m
					}
					copy(body.Elems, first)
					m.Body, _ = wire.Marshal(&body)
					return m
				})
				c.want = ErrPeer
			} else {
				net.Intercept("bob", tamper(c.typ, c.n, c.f))
			}
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			step := testStep("alice", "bob")
			in := ECDH{Config: Config{ChunkSize: 4, MaxElements: 1000}}
			// Bob may wait for alice's doubles forever once alice has
			// given up: end him when alice is done.
			bctx, bcancel := context.WithCancel(ctx)
			done := make(chan struct{})
			go func() {
				defer close(done)
				_, _ = in.Intersect(bctx, net.Party("bob"), step, "alice", Sender, b)
			}()
			ra, ea := in.Intersect(ctx, net.Party("alice"), step, "bob", Receiver, a)
			bcancel()
			<-done
			if c.want == nil {
				// A bad double-blinded value is never decoded: it just
				// fails to match, so alice loses at most that element.
				if ea != nil {
					t.Fatalf("alice: %v", ea)
				}
				if w := plain(a, b); len(ra.Indices) > len(w) {
					t.Errorf("alice: %v, more than %v", ra.Indices, w)
				}
				return
			}
			if !errors.Is(ea, c.want) {
				t.Errorf("alice: %v, want %v", ea, c.want)
			}
			if errors.Is(ea, ErrPeer) && !errors.Is(ea, wire.ErrMalformed) && !strings.Contains(ea.Error(), "element") {
				t.Errorf("alice's error names neither the rule nor the element: %v", ea)
			}
		})
	}
}

// TestIntersectContext: a silent peer makes Intersect end with the
// context, naming the peer.
func TestIntersectContext(t *testing.T) {
	t.Parallel()
	net := jobtest.NewNetwork("alice", "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err := ECDH{}.Intersect(ctx, net.Party("alice"), testStep("alice", "bob"), "bob", Receiver, [][]byte{[]byte("x")})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "bob") {
		t.Errorf("got %v", err)
	}
}

func TestIntersectBadArguments(t *testing.T) {
	t.Parallel()
	net := jobtest.NewNetwork("alice", "bob")
	ctx := context.Background()
	p := net.Party("alice")
	step := testStep("alice", "bob")
	for name, err := range map[string]error{
		"self":    func() error { _, err := ECDH{}.Intersect(ctx, p, step, "alice", Receiver, nil); return err }(),
		"no peer": func() error { _, err := ECDH{}.Intersect(ctx, p, step, "", Receiver, nil); return err }(),
		"role":    func() error { _, err := ECDH{}.Intersect(ctx, p, step, "bob", 0, nil); return err }(),
		"chunk": func() error {
			_, err := ECDH{Config: Config{ChunkSize: -1}}.Intersect(ctx, p, step, "bob", Receiver, nil)
			return err
		}(),
		"too large": func() error {
			_, err := ECDH{Config: Config{MaxElements: 1}}.Intersect(ctx, p, step, "bob", Receiver, [][]byte{{1}, {2}})
			return err
		}(),
	} {
		want := ErrConfig
		if name == "too large" {
			want = ErrTooLarge
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v, want %v", name, err, want)
		}
	}
}

// A party that restarts mid-exchange comes back with a new secret. Its
// peer's answers to the old run, and its own answers to the peer, would mix
// two secrets into a silently wrong intersection; the run ids make both
// sides fail with ErrRestarted instead, so the step is run again whole.
func TestIntersectRestartMidExchange(t *testing.T) {
	t.Parallel()
	a := [][]byte{[]byte("x"), []byte("y"), []byte("z")}
	b := [][]byte{[]byte("y"), []byte("z"), []byte("w")}
	net := jobtest.NewNetwork("alice", "bob")
	step := testStep("alice", "bob")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	// alice's first run sends its blinded set and dies.
	dst := DomainTag(step.Job, step.Phase, step.Round, step.Channel, "")
	oldRun := bytes.Repeat([]byte{1}, runIDLen)
	if err := sendChunks(ctx, StepNetwork(net.Party("alice"), step), "bob", TypeBlinded, HashBlind(a, dst, NewSecret()), DefaultChunkSize, oldRun); err != nil {
		t.Fatal(err)
	}
	// bob answers that set; alice, restarted, runs the step again.
	var ra, rb *Result
	var ea, eb error
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); rb, eb = ECDH{}.Intersect(ctx, net.Party("bob"), step, "alice", Sender, b) }()
	go func() { defer wg.Done(); ra, ea = ECDH{}.Intersect(ctx, net.Party("alice"), step, "bob", Receiver, a) }()
	wg.Wait()
	if ra != nil || !errors.Is(ea, ErrRestarted) {
		t.Errorf("alice after her restart: %v, %v; want ErrRestarted (bob answers her old set)", ra, ea)
	}
	if rb != nil || !errors.Is(eb, ErrRestarted) {
		t.Errorf("bob: %v, %v; want ErrRestarted (alice's answers come from a new run)", rb, eb)
	}
}

// Every ErrPeer is wire.ErrMalformed, whether or not its site wraps both.
func TestErrPeerIsMalformed(t *testing.T) {
	err := fmt.Errorf("element 3: %w", ErrPeer)
	if !errors.Is(err, ErrPeer) || !errors.Is(err, wire.ErrMalformed) {
		t.Fatalf("%v: Is(ErrPeer) %v, Is(wire.ErrMalformed) %v", err, errors.Is(err, ErrPeer), errors.Is(err, wire.ErrMalformed))
	}
	if errors.Is(wire.ErrMalformed, ErrPeer) || errors.Is(ErrTooLarge, wire.ErrMalformed) {
		t.Fatal("ErrPeer's Is matches more than wire.ErrMalformed")
	}
}
