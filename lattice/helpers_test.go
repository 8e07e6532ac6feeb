package lattice

import (
	"fmt"
	"sync"
	"testing"
)

// testParams builds the parameter set once per test binary.
var testParams = sync.OnceValues(func() (Params, error) { return NewParams(ParamsBGV13) })

func params(tb testing.TB) Params {
	tb.Helper()
	p, err := testParams()
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func names(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("org%02d", i+1)
	}
	return out
}

// consortia caches generated keys per (members, quorum): key generation for
// 17 members takes a second or so.
var consortia = struct {
	sync.Mutex
	m map[[2]int][]*Keys
}{m: map[[2]int][]*Keys{}}

// testKeys runs the dealerless key generation for n members (every share
// through its wire encoding) and returns each member's Keys, index i for
// point i+1.
func testKeys(tb testing.TB, n, quorum int) []*Keys {
	tb.Helper()
	consortia.Lock()
	defer consortia.Unlock()
	if k, ok := consortia.m[[2]int{n, quorum}]; ok {
		return k
	}
	keys, err := generate(params(tb), names(n), quorum, []byte("test nonce"))
	if err != nil {
		tb.Fatal(err)
	}
	consortia.m[[2]int{n, quorum}] = keys
	return keys
}

// generate plays every member's part of KeyGen in one process, sending
// every share through MarshalBinary/UnmarshalBinary as a network would.
func generate(p Params, members []string, quorum int, nonce []byte) ([]*Keys, error) {
	n := len(members)
	kgs := make([]*KeyGen, n)
	pubs := make([]*PublicKeyShare, n)
	inbox := make([][]*SecretShare, n) // inbox[j] = shares for member j+1
	for i, m := range members {
		kg, err := NewKeyGen(p, members, quorum, nonce)
		if err != nil {
			return nil, err
		}
		kgs[i] = kg
		pub, secrets, err := kg.GenShares(m)
		if err != nil {
			return nil, err
		}
		if pubs[i], err = wirePublicShare(kg, pub); err != nil {
			return nil, err
		}
		for j, s := range secrets {
			b, err := s.MarshalBinary()
			if err != nil {
				return nil, err
			}
			got := kg.AllocateSecretShare()
			if err := got.UnmarshalBinary(b); err != nil {
				return nil, err
			}
			inbox[j] = append(inbox[j], got)
		}
	}
	out := make([]*Keys, n)
	for j, m := range members {
		kg := kgs[j]
		pub, sec := pubs[0], inbox[j][0]
		if n > 1 {
			pub, sec = kg.AllocatePublicShare(), kg.AllocateSecretShare()
			if err := kg.AggregatePublic(pubs[0], pubs[1], pub); err != nil {
				return nil, err
			}
			if err := kg.AggregateSecret(inbox[j][0], inbox[j][1], sec); err != nil {
				return nil, err
			}
		}
		for i := 2; i < n; i++ {
			if err := kg.AggregatePublic(pub, pubs[i], pub); err != nil {
				return nil, err
			}
			if err := kg.AggregateSecret(sec, inbox[j][i], sec); err != nil {
				return nil, err
			}
		}
		k, err := kg.Finalise(m, pub, sec)
		if err != nil {
			return nil, err
		}
		out[j] = k
	}
	return out, nil
}

func wirePublicShare(kg *KeyGen, s *PublicKeyShare) (*PublicKeyShare, error) {
	b, err := s.MarshalBinary()
	if err != nil {
		return nil, err
	}
	got := kg.AllocatePublicShare()
	return got, got.UnmarshalBinary(b)
}

// testContext is the context of round r of a test job under k.
func testContext(k *PublicKey, r int) Context {
	return Context{Key: k.ID(), Job: "job-1", Phase: "sum", Round: r}
}

// available lists points 1..n except the dropped ones.
func available(n int, dropped ...int) []int {
	var out []int
	for p := 1; p <= n; p++ {
		skip := false
		for _, d := range dropped {
			skip = skip || d == p
		}
		if !skip {
			out = append(out, p)
		}
	}
	return out
}
