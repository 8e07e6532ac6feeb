package psi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// upSets draws a server set of nb distinct values and a client set of na
// values (with repeats), about half of them the server's.
func upSets(seed uint64, na, nb int) (client, server [][]byte) {
	r := rand.New(rand.NewPCG(seed, seed+1))
	for i := range nb {
		server = append(server, []byte(fmt.Sprintf("id-%d", i)))
	}
	r.Shuffle(len(server), func(i, j int) { server[i], server[j] = server[j], server[i] })
	for range na {
		if r.IntN(2) == 0 {
			client = append(client, []byte(fmt.Sprintf("id-%d", r.IntN(nb))))
		} else {
			client = append(client, []byte(fmt.Sprintf("other-%d", r.IntN(na))))
		}
	}
	return client, server
}

func TestFilterRoundTrip(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{0, 1, 2, 3, 255, 256, 257, 5000, 70000} {
		h := highBits(n)
		fps := make([]uint64, n)
		for i := range fps {
			fps[i] = r.Uint64() >> (64 - h - fpLowBits)
		}
		b, fn := buildFilter(fps, h)
		if fn != n || len(b) != filterLen(n, h) {
			t.Fatalf("n=%d: %d fingerprints in %d bytes", n, fn, len(b))
		}
		f, err := decodeUpFilter(b, fn, h)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		for _, v := range fps {
			if !f.contains(v) {
				t.Fatalf("n=%d: %x missing", n, v)
			}
		}
		in := map[uint64]bool{}
		for _, v := range fps {
			in[v] = true
		}
		for range 2000 { // a false positive has chance n·2^-(h+40) per query
			if v := r.Uint64() >> (64 - h - fpLowBits); !in[v] && f.contains(v) {
				t.Fatalf("n=%d: %x found", n, v)
			}
		}
		if n > 1 { // a repeat or a pair out of order in one bucket is refused
			x := fps[0] &^ 1
			for _, bad := range [][]uint64{{x, x}, {x + 1, x}} {
				s := slices.Clone(fps)
				slices.Sort(s)
				s = slices.Compact(s)
				s = slices.DeleteFunc(s, func(v uint64) bool { return v == x || v == x+1 })
				i, _ := slices.BinarySearch(s, x)
				s = slices.Insert(s, i, bad...)
				if _, err := decodeUpFilter(encodeFilterBits(s, h), len(s), h); err == nil {
					t.Errorf("n=%d: a filter holding %x decodes", n, bad)
				}
			}
		}
		if n > 0 { // truncated, or a bucket bit flipped
			if _, err := decodeUpFilter(b[:len(b)-1], fn, h); err == nil {
				t.Errorf("n=%d: a truncated filter decodes", n)
			}
			bad := slices.Clone(b)
			bad[0] ^= 1
			if _, err := decodeUpFilter(bad, fn, h); err == nil {
				t.Errorf("n=%d: a filter with a bucket bit flipped decodes", n)
			}
		}
	}
}

// upPair runs the unbalanced mode: alice the client with a, bob the server
// with b, each with its Store over its own data dir.
func upPair(t *testing.T, net *jobtest.Network, in func(*Store) Intersector, dirs [2]string, a, b [][]byte) (*Result, *Result) {
	t.Helper()
	ra, rb, ea, eb := pairWith(t, net, in(&Store{Secrets: job.DirSecrets(dirs[0]), Scope: "alice"}), in(&Store{Secrets: job.DirSecrets(dirs[1]), Scope: "bob:t.id"}), a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	return ra, rb
}

func unbalanced(st *Store) Intersector { return Unbalanced{Config: Config{ChunkSize: 64, Store: st}} }
func autoUp(st *Store) Intersector     { return Auto{Config: Config{ChunkSize: 64, Store: st}} }

// TestUnbalanced checks the unbalanced mode, alone and picked by Auto,
// against the plain intersection and ECDH's, on both sides.
func TestUnbalanced(t *testing.T) {
	t.Parallel()
	a, b := upSets(3, 60, 5000)
	b = append(b, b[:10]...) // repeats yield every position
	want, _, ea, eb := pair(t, jobtest.NewNetwork("alice", "bob"), ECDH{}, a, b)
	if ea != nil || eb != nil {
		t.Fatal(ea, eb)
	}
	for name, in := range map[string]func(*Store) Intersector{"Unbalanced": unbalanced, "Auto": autoUp} {
		net := jobtest.NewNetwork("alice", "bob")
		net.Capture("alice")
		ra, rb := upPair(t, net, in, [2]string{t.TempDir(), t.TempDir()}, a, b)
		checkResult(t, name+" alice", ra, a, b)
		checkResult(t, name+" bob", rb, b, a)
		if !slices.Equal(ra.Indices, want.Indices) || ra.Size != want.Size || ra.PeerSize != 5000 || rb.PeerSize != distinctCount(a) {
			t.Errorf("%s: alice %+v, ECDH gave %+v", name, ra, want)
		}
		if got := types(net, "alice"); !slices.Contains(got, TypeUpQuery) {
			t.Errorf("%s: alice sent %v, want the unbalanced mode", name, got)
		}
	}
	// An empty client set.
	ra, rb := upPair(t, jobtest.NewNetwork("alice", "bob"), unbalanced, [2]string{t.TempDir(), t.TempDir()}, nil, b)
	if ra.Size != 0 || len(rb.Indices) != 0 || rb.PeerSize != 0 || ra.PeerSize != 5000 {
		t.Errorf("an empty client set: %+v, %+v", ra, rb)
	}
	// Auto without a Store at the large side, or with sets too alike,
	// runs OT.
	for _, c := range []struct {
		a, b [][]byte
		st   bool
	}{{a, b, false}, {b[:4000], b, true}} {
		net := jobtest.NewNetwork("alice", "bob")
		net.Capture("alice")
		cfg := Config{ChunkSize: 64}
		if c.st {
			cfg.Store = &Store{Secrets: job.DirSecrets(t.TempDir())}
		}
		ra, _, ea, eb := pair(t, net, Auto{Config: cfg}, c.a, c.b)
		if ea != nil || eb != nil {
			t.Fatal(ea, eb)
		}
		checkResult(t, "Auto alice", ra, c.a, c.b)
		if got := types(net, "alice"); slices.Contains(got, TypeUpQuery) || !slices.Contains(got, TypeOTBase) {
			t.Errorf("store %v, %d against %d: alice sent %v, want OT", c.st, len(c.a), len(c.b), got)
		}
	}
}

// TestUnbalancedCache checks the client's cache of the filter and the
// server's key across restarts and a change of the server's set: a
// restarted pair (new Stores over the same data dirs) sends no filter and
// keeps the key; a changed set gets a new key and epoch, and the client
// fetches the new filter; a damaged cache is fetched again. The key
// stays in the server's data dir, mode 0600.
func TestUnbalancedCache(t *testing.T) {
	t.Parallel()
	a, b := upSets(5, 50, 4100)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	exchange := func(b [][]byte) (map[string]int, *Result) {
		net := jobtest.NewNetwork("alice", "bob")
		net.Capture("bob")
		ra, rb := upPair(t, net, unbalanced, dirs, a, b)
		checkResult(t, "alice", ra, a, b)
		checkResult(t, "bob", rb, b, a)
		counts := map[string]int{}
		for _, s := range net.Captured("bob") {
			counts[s.Message.Type]++
		}
		return counts, ra
	}
	keyFile := func() []byte {
		t.Helper()
		m, err := filepath.Glob(filepath.Join(dirs[1], upServerDir, "*", "key"))
		if err != nil || len(m) != 1 {
			t.Fatalf("key files %v, %v", m, err)
		}
		st, err := os.Stat(m[0])
		if err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("key file mode %v, %v", st.Mode(), err)
		}
		kb, _ := os.ReadFile(m[0])
		return kb
	}
	if c, _ := exchange(b); c[TypeUpFilter] != 1 {
		t.Errorf("first exchange: %v, want the filter sent once", c)
	}
	k1 := keyFile()
	if c, _ := exchange(b); c[TypeUpFilter] != 0 {
		t.Errorf("after a restart: %v, want no filter", c)
	}
	if !bytes.Equal(keyFile(), k1) {
		t.Error("the key changed although the set did not")
	}
	b2 := append(slices.Clone(b[:4000]), a[:3]...) // the server's set changes
	if c, r := exchange(b2); c[TypeUpFilter] != 1 || r.PeerSize != distinctCount(b2) {
		t.Errorf("after the set changed: %v, peer size %d, want the new filter", c, r.PeerSize)
	}
	var old, cur upKey
	_ = wire.Unmarshal(k1, &old)
	_ = wire.Unmarshal(keyFile(), &cur)
	if bytes.Equal(old.K, cur.K) || bytes.Equal(old.Epoch, cur.Epoch) || !bytes.Equal(old.ID, cur.ID) {
		t.Error("a changed set keeps its key or epoch, or changes the filter's id")
	}
	caches, _ := filepath.Glob(filepath.Join(dirs[0], upCacheDir, "*", "*", "filter"))
	if len(caches) != 1 {
		t.Fatalf("client caches %v", caches)
	}
	if err := os.WriteFile(caches[0], []byte("damaged"), 0o600); err != nil {
		t.Fatal(err)
	}
	if c, _ := exchange(b2); c[TypeUpFilter] != 1 {
		t.Errorf("with a damaged cache: %v, want the filter fetched again", c)
	}
}

// TestUnbalancedLeakage checks every message of the unbalanced mode
// against its profile: the psi disclosure; no element, hash of one,
// unblinded H(x) or the server's key in any body; the client's queries
// fresh per run and shuffled; the server's evaluations nothing but the
// queries raised to k; the filter only fingerprints of H(y)^k; the
// client's matches only fingerprints of values in the intersection.
func TestUnbalancedLeakage(t *testing.T) {
	t.Parallel()
	a, b := upSets(7, 60, 4200)
	dirs := [2]string{t.TempDir(), t.TempDir()}
	run := func() []jobtest.Sent {
		net := jobtest.NewNetwork("alice", "bob")
		net.Capture("alice")
		net.Capture("bob")
		upPair(t, net, unbalanced, dirs, a, b)
		return append(net.Captured("alice"), net.Captured("bob")...)
	}
	sent := run()
	s, err := (&Store{Secrets: job.DirSecrets(dirs[1]), Scope: "bob:t.id"}).loadServer(b)
	if err != nil || s == nil {
		t.Fatal("no server state", err)
	}
	tag := upTag(s.key.ID, s.key.Epoch)
	forbidden := [][]byte{s.key.K}
	shared := map[uint64]bool{}
	inB := map[string]bool{}
	for _, e := range b {
		inB[string(e)] = true
	}
	for i, e := range append(slices.Clone(a), b...) {
		h := sha256.Sum256(e)
		p, _ := group.Ristretto255.HashToElement(e, tag).MarshalBinary()
		forbidden = append(forbidden, e, h[:], p)
		if i < len(a) && inB[string(e)] {
			shared[oprfFingerprints([][]byte{e}, tag, s.k, s.key.H)[0]] = true
		}
	}
	counts := map[string]int{}
	for _, m := range sent {
		if m.Disclosure != wire.DisclosePSIBlinded {
			t.Errorf("%s discloses %q", m.Message.Type, m.Disclosure)
		}
		counts[m.From+" "+m.Message.Type]++
		for _, f := range forbidden {
			if bytes.Contains(m.Message.Body, f) {
				t.Fatalf("%s from %s carries an element, its hash, H(x) or the key", m.Message.Type, m.From)
			}
		}
		if m.Message.Type == TypeUpMatch {
			var body upMatch
			_ = wire.Unmarshal(m.Message.Body, &body)
			got, err := decodeMatch(m.Message.Body, len(a), s.key.H, body.Echo)
			if err != nil {
				t.Fatal(err)
			}
			for _, v := range got {
				if !shared[v] {
					t.Errorf("the client's matches name %x, not a shared value's fingerprint", v)
				}
			}
			if len(got) != len(shared) {
				t.Errorf("%d matches, %d shared values", len(got), len(shared))
			}
		}
	}
	// The server's evaluations are the queries raised to k, nothing else.
	qs, evals := points(sent, TypeUpQuery), points(sent, TypeUpEval)
	if want, err := DoubleBlind(qs, s.k); err != nil || !slices.Equal(want, evals) {
		t.Errorf("the evaluations are not the queries raised to the key (%v)", err)
	}
	// 60 client values with repeats: under 64 distinct, one query and one
	// eval chunk; the filter of 4200 fingerprints is one chunk.
	want := map[string]int{"alice psi/up-fetch": 1, "alice psi/up-match": 1, "alice psi/up-query": 1,
		"bob psi/up-eval": 1, "bob psi/up-filter": 1, "bob psi/up-offer": 1}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("messages sent %v, want %v", counts, want)
	}
	// The queries are blinded afresh: none repeats in a second run (which
	// finds the filter cached and sends none).
	again := run()
	for _, q := range qs {
		for _, m := range again {
			if bytes.Contains(m.Message.Body, q[:]) {
				t.Fatal("a query repeats across runs: blinding is reused")
			}
		}
	}
}

// points returns the points of every chunkBody message of type typ in
// sent, in order.
func points(sent []jobtest.Sent, typ string) []Point {
	var out []Point
	for _, m := range sent {
		if m.Message.Type == typ {
			var body chunkBody
			_ = wire.Unmarshal(m.Message.Body, &body)
			for i := 0; i+PointLen <= len(body.Elems); i += PointLen {
				out = append(out, Point(body.Elems[i:i+PointLen]))
			}
		}
	}
	return out
}

// TestUnbalancedRejectsTampering: a peer's malformed messages of the
// unbalanced mode are errors at the honest party (ErrPeer, ErrTooLarge or
// ErrRestarted), never a result or a panic, whichever side cheats.
func TestUnbalancedRejectsTampering(t *testing.T) {
	t.Parallel()
	a, b := upSets(11, 50, 4100)
	srv := &Store{Secrets: job.DirSecrets(t.TempDir()), Scope: "bob"}
	if _, err := srv.prepare(b); err != nil {
		t.Fatal(err)
	}
	other := bytes.Repeat([]byte{9}, runIDLen)
	type offer = upOffer
	type chunk = chunkBody
	for name, c := range map[string]struct {
		from   string // the cheat: alice is the client, bob the server
		tamper jobtest.Tamper
		want   error
	}{
		"offer: short id":      {"bob", tamperBody(TypeUpOffer, 1, func(o *offer) { o.ID = o.ID[1:] }), ErrPeer},
		"offer: huge set":      {"bob", tamperBody(TypeUpOffer, 1, func(o *offer) { o.N, o.FN, o.H = 1<<30, 1<<30, 30 }), ErrTooLarge},
		"offer: filter > set":  {"bob", tamperBody(TypeUpOffer, 1, func(o *offer) { o.FN = o.N + 1 }), ErrPeer},
		"offer: wide buckets":  {"bob", tamperBody(TypeUpOffer, 1, func(o *offer) { o.H += 2 }), ErrPeer},
		"filter: short":        {"bob", tamperBody(TypeUpFilter, 1, func(p *upFilterPart) { p.Bytes = p.Bytes[1:] }), ErrPeer},
		"filter: flipped":      {"bob", tamperBody(TypeUpFilter, 1, func(p *upFilterPart) { p.Bytes[0] ^= 1 }), ErrPeer},
		"filter: other run":    {"bob", tamperBody(TypeUpFilter, 1, func(p *upFilterPart) { p.Echo = other }), ErrRestarted},
		"eval: identity":       {"bob", tamperBody(TypeUpEval, 1, func(c *chunk) { clear(c.Elems[:PointLen]) }), ErrPeer},
		"eval: short":          {"bob", tamperBody(TypeUpEval, 1, func(c *chunk) { c.Elems = c.Elems[PointLen:] }), ErrPeer},
		"eval: other run":      {"bob", tamperBody(TypeUpEval, 1, func(c *chunk) { c.Echo = other }), ErrRestarted},
		"fetch: other run":     {"alice", tamperBody(TypeUpFetch, 1, func(f *upFetch) { f.Echo = other }), ErrRestarted},
		"fetch: short run id":  {"alice", tamperBody(TypeUpFetch, 1, func(f *upFetch) { f.Run = f.Run[1:] }), ErrPeer},
		"query: non-canonical": {"alice", tamperBody(TypeUpQuery, 1, func(c *chunk) { copy(c.Elems, bytes.Repeat([]byte{0xff}, PointLen)) }), ErrPeer},
		"query: huge set":      {"alice", tamperBody(TypeUpQuery, 1, func(c *chunk) { c.Total = 1 << 30 }), ErrTooLarge},
		"query: other run":     {"alice", tamperBody(TypeUpQuery, 1, func(c *chunk) { c.Echo = other }), ErrRestarted},
		"match: out of order":  {"alice", tamperBody(TypeUpMatch, 1, func(m *upMatch) { m.FPs = append(m.FPs, m.FPs[:8]...) }), ErrPeer},
		"match: ragged":        {"alice", tamperBody(TypeUpMatch, 1, func(m *upMatch) { m.FPs = append(m.FPs, 1) }), ErrPeer},
		"match: other run":     {"alice", tamperBody(TypeUpMatch, 1, func(m *upMatch) { m.Echo = other }), ErrRestarted},
		"match: out of range":  {"alice", tamperBody(TypeUpMatch, 1, func(m *upMatch) { m.FPs = append(m.FPs, 0xff, 0, 0, 0, 0, 0, 0, 0) }), ErrPeer},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork("alice", "bob")
			net.Intercept(c.from, c.tamper)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			step := testStep("alice", "bob")
			client, server := Unbalanced{Config: Config{ChunkSize: 64, MaxElements: 1000}}, Unbalanced{Config: Config{ChunkSize: 64, MaxElements: 1000, Store: srv}}
			victim, cheat, role, cheatRole, in, cin, sv, sc := "bob", "alice", Sender, Receiver, server, client, b, a
			if c.from == "bob" {
				victim, cheat, role, cheatRole, in, cin, sv, sc = "alice", "bob", Receiver, Sender, client, server, a, b
			}
			res, err := againstCheat(ctx, net, step, victim, cheat, role, cheatRole, in, cin, sv, sc)
			wantRefused(t, victim, res, err, c.want)
		})
	}
	// A server needs a Store; Align refuses the mode.
	nets := newMemNets("a", "b")
	if _, err := (Unbalanced{}).Run(context.Background(), nets["a"], "b", Sender, b); !errors.Is(err, ErrConfig) {
		t.Errorf("a server without a Store: %v", err)
	}
	if _, err := RunAlign(context.Background(), nets["a"], "a", []string{"a", "b"}, Config{Mode: ModeUnbalanced, Store: srv}, b); !errors.Is(err, ErrConfig) {
		t.Errorf("Align in the unbalanced mode: %v", err)
	}
}
