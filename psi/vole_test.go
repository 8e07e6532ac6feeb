package psi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
)

// TestVOLEIntersectRandom: the VOLE mode gives both parties the plain set
// intersection, whichever side holds which set, over chunked messages,
// with empty sets, repeats and full overlap.
func TestVOLEIntersectRandom(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(61, 67))
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
		{700, 500, 1000, false, 50}, // many OKVS and value chunks
		{5000, 4000, 8000, false, 0},
	} {
		for _, swap := range []bool{false, true} {
			a, b := randomSets(r, c.na, c.nb, c.pool, c.dup)
			t.Run(fmt.Sprintf("%d×%d/pool%d/dup=%v/swap=%v", c.na, c.nb, c.pool, c.dup, swap), func(t *testing.T) {
				t.Parallel()
				a, b := a, b
				if swap {
					a, b = b, a
				}
				net := jobtest.NewNetwork("alice", "bob")
				ra, rb, ea, eb := pair(t, net, VOLE{Config: Config{Edge: "e", ChunkSize: c.chunk}}, a, b)
				if ea != nil || eb != nil {
					t.Fatal(ea, eb)
				}
				checkResult(t, "alice", ra, a, b)
				checkResult(t, "bob", rb, b, a)
			})
		}
	}
}

// TestVOLEConfigIntersector: ModeVOLE and "vole" pick the VOLE mode.
func TestVOLEConfigIntersector(t *testing.T) {
	t.Parallel()
	if _, ok := (Config{Mode: ModeVOLE}).Intersector().(VOLE); !ok {
		t.Error("ModeVOLE does not give VOLE")
	}
	if m, err := ParseMode("vole"); err != nil || m != ModeVOLE {
		t.Errorf(`ParseMode("vole") = %v, %v`, m, err)
	}
	net := jobtest.NewNetwork("alice", "bob")
	if _, err := (VOLE{Config: Config{Mode: ModeVOLE + 1}}).Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "bob", Receiver, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("mode past the last: %v, want ErrConfig", err)
	}
	if _, err := (VOLE{}).Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "bob", 0, nil); !errors.Is(err, ErrConfig) {
		t.Errorf("role 0: %v, want ErrConfig", err)
	}
	if _, err := (VOLE{Config: Config{MaxElements: 1}}).Intersect(context.Background(), net.Party("alice"), testStep("alice", "bob"), "bob", Receiver, [][]byte{{1}, {2}}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("too large: %v, want ErrTooLarge", err)
	}
}

// TestAlignVOLE: Align in VOLE mode gives every party the plain common
// set; spokes send only to the hub, and the hub sends no OPRF values.
func TestAlignVOLE(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(71, 73))
	parties := []string{"p1", "p2", "p3"}
	sets := map[string][][]byte{}
	for _, q := range parties {
		sets[q], _ = randomSets(r, 300, 0, 400, q == "p2")
	}
	common := commonSet(parties, sets)
	net := jobtest.NewNetwork(parties...)
	for _, q := range parties {
		net.Capture(q)
	}
	res, errs := alignAll(t, net, "p3", parties, sets, Config{Edge: "ids", Mode: ModeVOLE, ChunkSize: 9})
	for _, q := range parties {
		if errs[q] != nil {
			t.Fatalf("%s: %v", q, errs[q])
		}
		if want := plain(sets[q], common); !slices.Equal(res[q].Indices, want) {
			t.Errorf("%s: %v, plain %v", q, res[q].Indices, want)
		}
		for _, s := range net.Captured(q) {
			if q != "p3" && (s.To != "p3" || s.Message.Type == TypeFilter) {
				t.Errorf("spoke %s sends %s to %s", q, s.Message.Type, s.To)
			}
			if q == "p3" && s.Message.Type == TypeVoleValues {
				t.Errorf("the hub sends OPRF values to %s", s.To)
			}
		}
	}
}

// TestVOLELeakage captures every message of a VOLE-mode PSI: only VOLE
// and filter types, each psi-blinded, in the counts the package doc
// gives; no element, digest (as made, or re-keyed under the joint seed)
// or OKVS value H(x) appears in clear; the
// sender's values are shuffled afresh per run.
func TestVOLELeakage(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(79, 83))
	a, b := randomSets(r, 200, 200, 300, false)
	in := VOLE{Config: Config{Edge: "e", ChunkSize: 64}}
	sent := capturedPair(t, in, a, b)
	dg := leakageDigester()
	keys := newVoleKeys(capturedJointSeed(t, dg, sent, TypeVoleBase, TypeVoleChoice))
	var forbidden [][]byte
	for _, e := range append(slices.Clone(a), b...) {
		d, rd := seededDigests(dg, keys.seed, e)
		h := sha256.Sum256(e)
		var v [gfLen]byte
		keys.value(&rd).put(v[:])
		forbidden = append(forbidden, e, d[:], rd[:], h[:16], v[:])
	}
	counts := checkBlindedBodies(t, sent, forbidden)
	// alice receives with 200 elements: an OKVS of 1.1·200 + 256 = 476
	// columns, 8 chunks of 64; bob's 200 values are 4 chunks.
	want := map[string]int{
		"alice psi/vole-base": 1, "alice psi/vole-keys": 1, "alice psi/vole-matrix": 1, "alice psi/vole-okvs": 8, "alice psi/filter": 1,
		"bob psi/vole-choice": 1, "bob psi/vole-trees": 1, "bob psi/vole-values": 4,
	}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("messages sent %v, want %v", counts, want)
	}
	if slices.Equal(otFilterBits(t, sent), otFilterBits(t, capturedPair(t, in, a, b))) {
		t.Error("matched values sit at the same positions in two runs: the sender's values are not shuffled")
	}
}

// TestVOLERejectsTampering: a peer's malformed VOLE messages are errors
// at the honest party (ErrPeer, ErrTooLarge or ErrRestarted), never a
// result or a panic, whichever side cheats.
func TestVOLERejectsTampering(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(89, 97))
	a, b := randomSets(r, 300, 200, 400, false)
	otherRun := bytes.Repeat([]byte{9}, runIDLen)
	type hello = otHelloBody
	type chunk = otChunkBody
	type keys = otKeysBody
	for name, c := range map[string]struct {
		from   string // alice is the receiver, bob the sender
		tamper jobtest.Tamper
		want   error
	}{
		"base: set too large":   {"alice", tamperBody(TypeVoleBase, 1, func(h *hello) { h.Total = 1 << 30 }), ErrTooLarge},
		"base: negative set":    {"alice", tamperBody(TypeVoleBase, 1, func(h *hello) { h.Total = -1 }), ErrPeer},
		"base: KKRT's 512":      {"alice", tamperBody(TypeVoleBase, 1, func(h *hello) { h.Points = bytes.Repeat(h.Points, 4) }), ErrPeer},
		"base: identity":        {"alice", tamperBody(TypeVoleBase, 1, func(h *hello) { clear(h.Points[:PointLen]) }), ErrPeer},
		"choice: short points":  {"bob", tamperBody(TypeVoleChoice, 1, func(h *hello) { h.Points = h.Points[PointLen:] }), ErrPeer},
		"choice: wrong echo":    {"bob", tamperBody(TypeVoleChoice, 1, func(h *hello) { h.Echo = otherRun }), ErrRestarted},
		"keys: short":           {"alice", tamperBody(TypeVoleKeys, 1, func(k *keys) { k.Cipher = k.Cipher[otCipherLen:] }), ErrPeer},
		"keys: garbled":         {"alice", tamperBody(TypeVoleKeys, 1, func(k *keys) { k.Cipher[12] ^= 1; k.Cipher[otCipherLen+12] ^= 1 }), ErrPeer},
		"matrix: short":         {"alice", tamperBody(TypeVoleMatrix, 1, func(c *chunk) { c.Data = c.Data[1:] }), ErrPeer},
		"matrix: wrong rows":    {"alice", tamperBody(TypeVoleMatrix, 1, func(c *chunk) { c.Total += 128 }), ErrPeer},
		"matrix: other run":     {"alice", tamperBody(TypeVoleMatrix, 1, func(c *chunk) { c.Run = otherRun }), ErrRestarted},
		"trees: short":          {"bob", tamperBody(TypeVoleTrees, 1, func(c *chunk) { c.Data = c.Data[gfLen:] }), ErrPeer},
		"trees: wrong count":    {"bob", tamperBody(TypeVoleTrees, 1, func(c *chunk) { c.Total-- }), ErrPeer},
		"trees: wrong echo":     {"bob", tamperBody(TypeVoleTrees, 1, func(c *chunk) { c.Echo = otherRun }), ErrRestarted},
		"okvs: short chunk":     {"alice", tamperBody(TypeVoleOKVS, 1, func(c *chunk) { c.Data = c.Data[1:] }), ErrPeer},
		"okvs: out of order":    {"alice", tamperBody(TypeVoleOKVS, 2, func(c *chunk) { c.Index = 0 }), ErrPeer},
		"okvs: attempt changes": {"alice", tamperBody(TypeVoleOKVS, 2, func(c *chunk) { c.Attempt = 1 }), ErrPeer},
		"okvs: attempt too big": {"alice", tamperBody(TypeVoleOKVS, 1, func(c *chunk) { c.Attempt = maxCuckooAttempts }), ErrPeer},
		"okvs: huge total":      {"alice", tamperBody(TypeVoleOKVS, 1, func(c *chunk) { c.Total = 1 << 40 }), ErrPeer},
		"values: long chunk":    {"bob", tamperBody(TypeVoleValues, 2, func(c *chunk) { c.Data = append(c.Data, 0) }), ErrPeer},
		"values: wrong total":   {"bob", tamperBody(TypeVoleValues, 1, func(c *chunk) { c.Total++ }), ErrPeer},
		"values: other run":     {"bob", tamperBody(TypeVoleValues, 3, func(c *chunk) { c.Run = otherRun }), ErrRestarted},
		"filter: long":          {"alice", tamperBody(TypeFilter, 1, func(f *filterBody) { f.Bits = append(f.Bits, 0) }), ErrPeer},
		"filter: other run":     {"alice", tamperBody(TypeFilter, 1, func(f *filterBody) { f.Echo = otherRun }), ErrRestarted},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork("alice", "bob")
			net.Intercept(c.from, c.tamper)
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			step := testStep("alice", "bob")
			in := VOLE{Config: Config{ChunkSize: 64, MaxElements: 1000}}
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
