package psi

import (
	"encoding/binary"
	mrand "math/rand/v2"
	"testing"
)

// TestFirstOccurrences checks firstOccurrences against a map, for sizes
// around one and several parts, with repeats near and far apart, and
// with digests that share their first 8 bytes (same part, same slot)
// but differ after them.
func TestFirstOccurrences(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 2, 100, partSize, 3*partSize + 17, 50_000} {
		all := make([][digestLen]byte, n)
		for i := range all {
			switch r := rng.IntN(10); {
			case i > 0 && r < 3: // a repeat of an earlier digest
				all[i] = all[rng.IntN(i)]
			case i > 0 && r < 4: // same first 8 bytes as an earlier one
				all[i] = all[rng.IntN(i)]
				binary.LittleEndian.PutUint64(all[i][8:], rng.Uint64())
			default:
				binary.LittleEndian.PutUint64(all[i][:8], rng.Uint64())
				binary.LittleEndian.PutUint64(all[i][8:], rng.Uint64())
			}
		}
		got := firstOccurrences(all)
		seen := map[[digestLen]byte]int32{}
		for i, d := range all {
			f, ok := seen[d]
			if !ok {
				f = int32(i)
				seen[d] = f
			}
			if got[i] != f {
				t.Fatalf("n=%d: first occurrence of %d is %d, want %d", n, i, got[i], f)
			}
		}
	}
}

// TestDistinctDigests checks the elements, positions and digests
// distinctDigests returns against distinct's, with repeats and without
// (where uniq is elems, and must not let an append reach elems' array).
func TestDistinctDigests(t *testing.T) {
	dg := newDigester([]byte("test"))
	rng := mrand.New(mrand.NewPCG(5, 6))
	repeats := make([][]byte, 20_000)
	for i := range repeats {
		repeats[i] = []byte{byte(rng.IntN(200)), byte(rng.IntN(100))}
	}
	distinctOnes := make([][]byte, 20_000, 20_001)
	for i := range distinctOnes {
		distinctOnes[i] = []byte{byte(i), byte(i >> 8), 7}
	}
	for _, elems := range [][][]byte{repeats, distinctOnes, {}} {
		uniq, of, ds, err := dg.distinctDigests(elems)
		if err != nil {
			t.Fatal(err)
		}
		wantU, wantOf := distinct(elems)
		if len(uniq) != len(wantU) || len(ds) != len(wantU) {
			t.Fatalf("%d distinct, %d digests, want %d", len(uniq), len(ds), len(wantU))
		}
		want := dg.digests(wantU)
		for u := range wantU {
			if string(uniq[u]) != string(wantU[u]) || ds[u] != want[u] {
				t.Fatalf("distinct element %d: %x (digest %x), want %x (%x)", u, uniq[u], ds[u], wantU[u], want[u])
			}
		}
		for i := range elems {
			if of[i] != wantOf[i] {
				t.Fatalf("position %d: %d, want %d", i, of[i], wantOf[i])
			}
		}
		if cap(uniq) != len(uniq) && len(uniq) == len(elems) {
			t.Fatalf("uniq has capacity %d past its %d elements", cap(uniq), len(uniq))
		}
	}
}

// TestMatchOutputs checks matchOutputs against a loop over all pairs,
// for output lengths 6 to 16, with repeats among ours and among the
// peer's values (the last matching position wins, the first of equal
// outputs gets it), values that share their first 8 bytes, and sizes
// around one and several parts.
func TestMatchOutputs(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(7, 8))
	for _, l := range []int{6, 8, 11, 16} {
		for _, sz := range [][2]int{{0, 0}, {1, 0}, {0, 1}, {1, 1}, {100, 3000}, {3 * partSize, 2*partSize + 5}} {
			n, np := sz[0], sz[1]
			own, peer := make([]byte, n*l), make([]byte, np*l)
			for i := range own {
				own[i] = byte(rng.IntN(256))
			}
			if n > 1 {
				copy(own[l:2*l], own[:l]) // ours 0 and 1 equal
			}
			for k := range np {
				v := peer[k*l : (k+1)*l]
				switch r := rng.IntN(4); {
				case n > 0 && r < 2: // one of ours, or one of ours but for the last byte
					copy(v, own[rng.IntN(n)*l:])
					if r == 1 {
						v[l-1]++
					}
				default:
					for i := range v {
						v[i] = byte(rng.IntN(256))
					}
				}
			}
			sc := newScratch(1 << 20) // too small for the largest: those from the heap
			got := matchOutputs(own, n, peer, np, l, sc)
			sc.close()
			for u := range n {
				want := -1
				for k := range np {
					if string(peer[k*l:(k+1)*l]) == string(own[u*l:(u+1)*l]) {
						want = k
					}
				}
				if u == 1 && n > 1 {
					want = -1 // equal to ours 0, which gets it
				}
				if got[u] != want {
					t.Fatalf("l=%d n=%d peer %d: ours %d matched %d, want %d", l, n, np, u, got[u], want)
				}
			}
		}
	}
}

// FuzzMatchOutputs feeds matchOutputs arbitrary values on the peer's
// side (what a sender controls) against ours, both cut from the input,
// and checks it against a loop over all pairs.
func FuzzMatchOutputs(f *testing.F) {
	f.Add(byte(11), []byte("0123456789abcdefghij0123456789abcdefghij"), 2)
	f.Add(byte(6), make([]byte, 60), 5)
	f.Fuzz(func(t *testing.T, lb byte, b []byte, split int) {
		l := 6 + int(lb)%11 // 6..16, as outLen gives
		rows := len(b) / l
		n := 0
		if rows > 0 {
			n = (split%rows + rows) % rows
		}
		own, peer := b[:n*l], b[n*l:rows*l]
		got := matchOutputs(own, n, peer, rows-n, l, nil)
		for u := range n {
			want := -1
			for k := range rows - n {
				if string(peer[k*l:(k+1)*l]) == string(own[u*l:(u+1)*l]) {
					want = k
				}
			}
			for v := range u { // an equal output of ours before u gets it
				if string(own[v*l:(v+1)*l]) == string(own[u*l:(u+1)*l]) {
					want = -1
				}
			}
			if got[u] != want {
				t.Fatalf("l=%d: ours %d matched %d, want %d", l, u, got[u], want)
			}
		}
	})
}
