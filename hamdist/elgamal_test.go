package hamdist

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/cloudflare/circl/group"
	"github.com/cohortdm/cohort/wire"
)

// A small hand-worked case (the paper gives no numeric example): A and B
// differ at positions 1 and 3 of five, so Fig. 1 counts two decryptions
// of g^{-1} and Fig. 2 three decryptions of 1.
func TestHandExample(t *testing.T) {
	a := []bool{false, true, true, false, true}
	b := []bool{true, true, false, false, true}
	k := GenerateKey()
	flipped, err := FlipBits(k.Public(), k.EncryptBits(a), b)
	if err != nil {
		t.Fatal(err)
	}
	if got := k.CountInverse(flipped); got != 2 {
		t.Errorf("Fig. 1: Hamming distance %d, want 2", got)
	}
	av, bv := boolValues(a), boolValues(b)
	blinded, err := Compare(k.Public(), k.Encrypt(av), ExactWindows(bv))
	if err != nil {
		t.Fatal(err)
	}
	if got := len(a) - k.CountOnes(blinded); got != 2 {
		t.Errorf("Fig. 2: generalised Hamming distance %d, want 2", got)
	}
}

func boolValues(b []bool) []Value {
	out := make([]Value, len(b))
	for i, x := range b {
		out[i] = IntValue(map[bool]int64{false: 0, true: 1}[x])
	}
	return out
}

// Both protocols agree with the distance in the clear on random vectors:
// binary (Fig. 1 and 2), over a domain of s values (Fig. 2) and with a
// threshold (|a−b| > t counts).
func TestAgainstPlain(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	k := GenerateKey()
	for trial := range 4 {
		n := 1 + r.IntN(150)
		a, b := make([]int64, n), make([]int64, n)
		for i := range a {
			a[i], b[i] = int64(r.IntN(40)-20), int64(r.IntN(40)-20)
		}
		for _, thr := range []int{0, 1, 3} {
			want := 0
			for i := range a {
				if d := a[i] - b[i]; d > int64(thr) || d < -int64(thr) {
					want++
				}
			}
			out, err := Compare(k.Public(), k.Encrypt(Ints(a)), ThresholdWindows(b, thr))
			if err != nil {
				t.Fatal(err)
			}
			if len(out) != n*(2*thr+1) {
				t.Fatalf("%d comparisons for %d positions, threshold %d", len(out), n, thr)
			}
			if got := n - k.CountOnes(out); got != want {
				t.Errorf("trial %d threshold %d: distance %d, want %d", trial, thr, got, want)
			}
		}
		bits := func() []bool {
			v := make([]bool, n)
			for i := range v {
				v[i] = r.IntN(2) == 1
			}
			return v
		}
		x, y := bits(), bits()
		want := 0
		for i := range x {
			if x[i] != y[i] {
				want++
			}
		}
		out, err := FlipBits(k.Public(), k.EncryptBits(x), y)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.CountInverse(out); got != want {
			t.Errorf("trial %d Fig. 1: %d, want %d", trial, got, want)
		}
	}
}

// Negative and positive integers are one ring: IntValue(v) + 1 =
// IntValue(v+1) across zero and near the bounds.
func TestIntValue(t *testing.T) {
	one := g.NewScalar().SetUint64(1)
	for _, v := range []int64{-MaxInt, -2, -1, 0, 1, MaxInt - 1} {
		if !g.NewScalar().Add(IntValue(v).s, one).IsEqual(IntValue(v + 1).s) {
			t.Errorf("IntValue(%d)+1 != IntValue(%d)", v, v+1)
		}
	}
}

// A hostile key holder that encrypts chosen plaintexts g^{s_i} (distinct,
// known to it) instead of g or g^{-1} reads the comparer's whole vector
// off Fig. 1: each decryption is g^{s_i} or g^{-s_i}, which names both the
// position and b_i, whatever the permutation. Against Fig. 2 the same
// attack sees only 1 or g^{r(b_i−s_i)} with a fresh r: no decryption is
// any g^{±s_i} or g^{v−s_i}, and only the count of ones is left. This is
// why the kinds run Fig. 2 for every column.
func TestHostileHolder(t *testing.T) {
	const n = 64
	r := rand.New(rand.NewPCG(3, 4))
	k := GenerateKey()
	b := make([]bool, n)
	s := make([]group.Scalar, n)
	chosen := make([]Ciphertext, n)
	for i := range b {
		b[i] = r.IntN(2) == 1
		s[i] = g.NewScalar().SetUint64(uint64(1000 + i))
		chosen[i] = encrypt(k.h, g.NewElement().MulGen(s[i]))
	}
	flipped, err := FlipBits(k.Public(), chosen, b)
	if err != nil {
		t.Fatal(err)
	}
	// What the attacker can look decryptions up in: g^{s_i} means b_i = 0,
	// g^{-s_i} means b_i = 1.
	type hit struct {
		i   int
		bit bool
	}
	table := map[string]hit{}
	for i := range s {
		pos := g.NewElement().MulGen(s[i])
		table[enc(t, pos)] = hit{i, false}
		table[enc(t, pos.Neg(pos))] = hit{i, true}
	}
	recovered := make([]bool, n)
	found := 0
	for _, c := range flipped {
		if h, ok := table[enc(t, k.decrypt(c))]; ok {
			recovered[h.i], found = h.bit, found+1
		}
	}
	if found != n || fmt.Sprint(recovered) != fmt.Sprint(b) {
		t.Fatalf("Fig. 1: the hostile holder recovered %d positions; the attack this test names no longer works", found)
	}

	blinded, err := Compare(k.Public(), chosen, ExactWindows(boolValues(b)))
	if err != nil {
		t.Fatal(err)
	}
	for i := range s {
		for _, v := range []uint64{0, 1} {
			d := g.NewScalar().Sub(g.NewScalar().SetUint64(v), s[i])
			table[enc(t, g.NewElement().MulGen(d))] = hit{i, v == 1}
		}
	}
	for _, c := range blinded {
		if h, ok := table[enc(t, k.decrypt(c))]; ok {
			t.Fatalf("Fig. 2: a decryption names position %d", h.i)
		}
	}
}

func enc(t *testing.T, e group.Element) string {
	t.Helper()
	b, err := e.MarshalBinaryCompress()
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// memNet is an in-memory Network for two parties.
type memNet struct {
	self string
	mu   *sync.Mutex
	q    map[string]chan []byte // "from>to/type"
}

func newMemNets(a, b string) (*memNet, *memNet) {
	mu, q := &sync.Mutex{}, map[string]chan []byte{}
	return &memNet{a, mu, q}, &memNet{b, mu, q}
}

func (m *memNet) ch(key string) chan []byte {
	m.mu.Lock()
	defer m.mu.Unlock()
	c, ok := m.q[key]
	if !ok {
		c = make(chan []byte, 1<<12)
		m.q[key] = c
	}
	return c
}

func (m *memNet) Self() string { return m.self }
func (m *memNet) Send(_ context.Context, to, typ string, body []byte, _ wire.Disclosure) error {
	m.ch(m.self + ">" + to + "/" + typ) <- body
	return nil
}
func (m *memNet) Receive(ctx context.Context, from, typ string) ([]byte, error) {
	select {
	case b := <-m.ch(from + ">" + m.self + "/" + typ):
		return b, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// The exchange over a network, in chunks, gives the distance in the
// clear, and a vector longer than one chunk arrives whole.
func TestExchange(t *testing.T) {
	n := ChunkSize + 17
	r := rand.New(rand.NewPCG(5, 6))
	a, b := make([]int64, n), make([]int64, n)
	want := 0
	for i := range a {
		a[i], b[i] = int64(r.IntN(3)), int64(r.IntN(3))
		if a[i] != b[i] {
			want++
		}
	}
	na, nb := newMemNets("alice", "bob")
	ctx := context.Background()
	errc := make(chan error, 1)
	go func() { errc <- RunComparer(ctx, nb, "alice", ExactWindows(Ints(b)), 1) }()
	same, err := RunHolder(ctx, na, "bob", Ints(a), 1, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := <-errc; err != nil {
		t.Fatal(err)
	}
	if n-same != want {
		t.Errorf("distance %d, want %d", n-same, want)
	}
}

// A message of an earlier run (another key) is refused as ErrRestarted,
// and a key announcing another length as ErrLength.
func TestRunsAndLengths(t *testing.T) {
	k1, k2 := GenerateKey(), GenerateKey()
	cts := k1.Encrypt(Ints([]int64{1, 2, 3}))
	b, err := EncodeChunk(k1.Public(), cts, 0, ChunkSize)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeChunk(b, k2.Public(), 3, 0, ChunkSize); !errors.Is(err, ErrRestarted) {
		t.Errorf("chunk of another key: %v", err)
	}
	got, err := DecodeChunk(b, k1.Public(), 3, 0, ChunkSize)
	if err != nil || len(got) != 3 || k1.CountOnes(got) != 0 {
		t.Errorf("round trip: %d ciphertexts, %v", len(got), err)
	}
	key, err := EncodeKey(k1.Public(), 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeKey(key, 4); !errors.Is(err, ErrLength) {
		t.Errorf("key for 3 positions taken for 4: %v", err)
	}
}
