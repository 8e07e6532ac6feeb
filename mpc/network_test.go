package mpc

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"regexp"
	"testing"
)

// faultyNet delivers what its inner network delivers, except that in
// round `round` it replaces what party `from` sent by fault's result.
type faultyNet struct {
	inner Network
	round uint32
	from  int
	fault func([]Elem) []Elem
}

func (f faultyNet) Exchange(ctx context.Context, round uint32, out [][]Elem) ([][]Elem, error) {
	in, err := f.inner.Exchange(ctx, round, out)
	if err == nil && round == f.round {
		in[f.from] = f.fault(in[f.from])
	}
	return in, err
}

// TestPeerVectorFaults runs a Mul whose round-2 vector from party 1 to
// party 0 is cut short, made longer or missing: party 0 must fail with
// an error naming the round and the party and the lengths only, and no
// party may hang.
func TestPeerVectorFaults(t *testing.T) {
	faults := map[string]func([]Elem) []Elem{
		"short":   func(v []Elem) []Elem { return v[:len(v)-1] },
		"long":    func(v []Elem) []Elem { return append(v, v[0]) },
		"missing": func([]Elem) []Elem { return nil },
	}
	pattern := regexp.MustCompile(`^mpc: round 2: party 1 sent (nothing|\d+ elements), want 6 elements$`)
	for name, fault := range faults {
		t.Run(name, func(t *testing.T) {
			x := []int64{11, -22, 33, -44, 55, -66}
			var secrets []string
			for _, v := range ints(x) {
				secrets = append(secrets, v.String(), fmt.Sprint(v.Uint64()))
			}
			wrap := func(self int, nw Network) Network {
				if self != 0 {
					return nw
				}
				return faultyNet{inner: nw, round: 2, from: 1, fault: fault}
			}
			_, errs := runParties(t, 3, 1, wrap, func(ctx context.Context, p *Party) error {
				sx, err := shared(ctx, p, x)
				if err != nil {
					return err
				}
				_, err = p.Mul(ctx, sx, sx)
				return err
			})
			if errs[0] == nil || !pattern.MatchString(errs[0].Error()) {
				t.Fatalf("party 0: %v", errs[0])
			}
			for _, s := range secrets {
				if regexp.MustCompile(regexp.QuoteMeta(s)).MatchString(errs[0].Error()) {
					t.Fatalf("error shows a value: %v", errs[0])
				}
			}
			// The others finished the round (party 0 received their
			// vectors), or stopped when party 0's failure cancelled them.
			for i, err := range errs[1:] {
				if err != nil && !errors.Is(err, context.Canceled) {
					t.Fatalf("party %d: %v", i+1, err)
				}
			}
		})
	}
}

// TestNetworkVectorCount checks the error for a network that returns
// the wrong number of vectors.
func TestNetworkVectorCount(t *testing.T) {
	p, err := NewParty(0, 3, 1, shortNet{}, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Open(t.Context(), []Elem{NewElem(1)})
	if err == nil || err.Error() != "mpc: round 1: 2 vectors from the network, want 3" {
		t.Fatalf("open: %v", err)
	}
}

type shortNet struct{}

func (shortNet) Exchange(_ context.Context, _ uint32, out [][]Elem) ([][]Elem, error) {
	return out[:2], nil
}

func TestNewPartyParams(t *testing.T) {
	nw := shortNet{}
	for _, c := range []struct{ self, n, t int }{{0, 2, 1}, {0, 4, 2}, {0, 3, 0}, {3, 3, 1}, {-1, 3, 1},
		{0, MaxParties + 1, 1}} {
		if _, err := NewParty(c.self, c.n, c.t, nw, rand.Reader); !errors.Is(err, ErrParams) {
			t.Fatalf("%+v: %v", c, err)
		}
	}
	if _, err := NewParty(0, 3, 1, nil, rand.Reader); !errors.Is(err, ErrParams) {
		t.Fatalf("nil network: %v", err)
	}
}
