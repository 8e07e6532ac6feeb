package psi

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/wire"
)

// types returns the message types a party sent, without repeats.
func types(net *jobtest.Network, who string) []string {
	var out []string
	for _, s := range net.Captured(who) {
		if !slices.Contains(out, s.Message.Type) {
			out = append(out, s.Message.Type)
		}
	}
	slices.Sort(out)
	return out
}

// TestAuto: both sides pick ECDH for small sets, OT once the two sets
// reach AutoOTMin distinct elements in all and VOLE once they reach
// AutoVOLEMin, whoever holds how many, and the result is the plain
// intersection either way.
func TestAuto(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(41, 43))
	for _, c := range []struct {
		na, nb int
		want   Mode
	}{
		{0, 0, ModeECDH}, {10, 20, ModeECDH}, {AutoOTMin - 1, 0, ModeECDH}, {AutoOTMin - 300, 299, ModeECDH},
		{AutoOTMin - 300, 300, ModeOT}, {0, AutoOTMin, ModeOT}, {1500, 40, ModeOT},
		{AutoVOLEMin - 1001, 1000, ModeOT}, {AutoVOLEMin - 1000, 1000, ModeVOLE}, {500, AutoVOLEMin, ModeVOLE},
	} {
		a, b := randomSets(r, c.na, c.nb, 4*(c.na+c.nb)+10, false) // drawn in case order, before the cases run in parallel
		t.Run(fmt.Sprintf("%d+%d", c.na, c.nb), func(t *testing.T) {
			t.Parallel()
			net := jobtest.NewNetwork("alice", "bob")
			net.Capture("alice")
			net.Capture("bob")
			ra, rb, ea, eb := pair(t, net, Config{Edge: "e", Mode: ModeAuto}.Intersector(), a, b)
			if ea != nil || eb != nil {
				t.Fatalf("alice %v, bob %v", ea, eb)
			}
			checkResult(t, "alice", ra, a, b)
			checkResult(t, "bob", rb, b, a)
			for _, who := range []string{"alice", "bob"} {
				got := types(net, who)
				if !slices.Contains(got, TypeSize) {
					t.Errorf("%s sent no size: %v", who, got)
				}
				used := map[Mode]bool{
					ModeOT:   slices.Contains(got, TypeOTBase) || slices.Contains(got, TypeOTChoice),
					ModeVOLE: slices.Contains(got, TypeVoleBase) || slices.Contains(got, TypeVoleChoice),
					ModeECDH: slices.Contains(got, TypeBlinded),
				}
				for m, u := range used {
					if u != (m == c.want) {
						t.Errorf("%s sent %v; want mode %d", who, got, c.want)
					}
				}
			}
		})
	}
}

// TestAlignAuto: in ModeAuto the hub agrees a protocol with each spoke
// on its own, so a small spoke runs ECDH and a large one OT in the same
// alignment, and every party gets the common set.
func TestAlignAuto(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(47, 53))
	parties := []string{"hub", "big", "small"}
	pool := make([][]byte, 1200)
	for i := range pool {
		pool[i] = []byte(fmt.Sprintf("id-%d", i))
	}
	pick := func(n int) [][]byte {
		out := slices.Clone(pool)
		r.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
		return out[:n]
	}
	// The hub holds 700 ids: with big's 900 it passes AutoOTMin, with
	// small's 100 it does not.
	sets := map[string][][]byte{"hub": pick(700), "big": pick(900), "small": pick(100)}
	common := commonSet(parties, sets)
	net := jobtest.NewNetwork(parties...)
	for _, q := range parties {
		net.Capture(q)
	}
	res, errs := alignAll(t, net, "hub", parties, sets, Config{Edge: "ids", Mode: ModeAuto})
	for _, q := range parties {
		if errs[q] != nil {
			t.Fatalf("%s: %v", q, errs[q])
		}
		if want := plain(sets[q], common); !slices.Equal(res[q].Indices, want) {
			t.Errorf("%s: %v, want %v", q, res[q].Indices, want)
		}
	}
	if got := types(net, "big"); !slices.Contains(got, TypeOTChoice) || slices.Contains(got, TypeBlinded) {
		t.Errorf("big spoke sent %v, want OT", got)
	}
	if got := types(net, "small"); !slices.Contains(got, TypeBlinded) || slices.Contains(got, TypeOTChoice) {
		t.Errorf("small spoke sent %v, want ECDH", got)
	}
}

func TestDecodeSize(t *testing.T) {
	t.Parallel()
	good, _ := wire.Marshal(&sizeBody{Size: 5})
	if n, err := decodeSize(good, 5); err != nil || n.Size != 5 {
		t.Fatalf("5 within 5: %+v %v", n, err)
	}
	if _, err := decodeSize(good, 4); !errors.Is(err, ErrTooLarge) || !errors.Is(err, ErrPeer) {
		t.Errorf("5 over 4: %v", err)
	}
	neg, _ := wire.Marshal(&sizeBody{Size: -1})
	if _, err := decodeSize(neg, 4); !errors.Is(err, wire.ErrMalformed) {
		t.Errorf("-1: %v", err)
	}
	if _, err := ParseMode("fast"); !errors.Is(err, ErrConfig) {
		t.Errorf("ParseMode(fast): %v", err)
	}
	for s, m := range map[string]Mode{"ecdh": ModeECDH, "ot": ModeOT, "auto": ModeAuto} {
		if got, err := ParseMode(s); err != nil || got != m {
			t.Errorf("ParseMode(%s) = %d, %v", s, got, err)
		}
	}
	// The peer's announced size is refused before any exchange.
	net := jobtest.NewNetwork("alice", "bob")
	ctx := context.Background()
	big, _ := wire.Marshal(&sizeBody{Size: 1 << 30})
	step := testStep("alice", "bob")
	if err := net.Party("bob").Send(ctx, "alice", step.Message("bob", TypeSize, big), wire.DisclosePSIBlinded); err != nil {
		t.Fatal(err)
	}
	if _, err := (Auto{}).Intersect(ctx, net.Party("alice"), step, "bob", Receiver, [][]byte{{1}}); !errors.Is(err, ErrTooLarge) {
		t.Errorf("a peer announcing 2^30 elements: %v", err)
	}
}

func FuzzDecodeSize(f *testing.F) {
	good, _ := wire.Marshal(&sizeBody{Size: 5})
	f.Add(good, 10)
	serves, _ := wire.Marshal(&sizeBody{Size: 1 << 24, Serves: true})
	f.Add(serves, 10)
	f.Add([]byte{0x81}, 10)
	f.Fuzz(func(t *testing.T, b []byte, max int) {
		if max < 0 {
			return
		}
		n, err := decodeSize(b, max)
		if err != nil {
			checkOTErr(t, err)
			return
		}
		if n.Size < 0 || (n.Size > max && (!n.Serves || n.Size > UnbalancedMaxServer)) {
			t.Fatalf("accepted %+v with limit %d", n, max)
		}
	})
}
