package lattice

import (
	"fmt"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/schemes/bgv"
)

// SumTermsEach's sums made a range of chunks at a time, so that a party
// that receives its chunks in parts (boost's lattice path, whose down
// messages come in parts of about 33 MB) does each part's products while
// the next part is still being encrypted and sent, and masks once when
// the last is in. The chunks' products add up whatever the ranges, each
// chunk's W is the one its global index gives, and the sums are masked
// once at the end as SumTermsEach masks them: the masked sums are
// distributed as SumTermsEach's and decrypt to the same sums. Each range
// comes with its own terms, so that a caller holds one range's terms at a
// time; the noise bound is checked on the running total of the weights
// before each range's products, and nothing leaves before FinishEach, so
// sums whose terms pass the bound only in part are refused all the same.

// EachSums is the unmasked sums of one set of terms over several
// encrypted vectors, accumulated a range of chunks at a time (AddEach) and
// masked by FinishEach. Not safe for concurrent use; any BinSummer of the
// same layout may add to it, one at a time.
type EachSums struct {
	bins, nodes int
	out         []*rlwe.Ciphertext
	chunks      int    // the vectors' chunks
	next        int    // the first chunk not yet added
	weights     uint64 // the weights of the terms added so far (checkNoise)
	done        bool
}

// NewEachSums returns zero sums for sets vectors of chunks chunks each.
func (s *BinSummer) NewEachSums(sets, chunks int) (*EachSums, error) {
	l := s.l
	if sets < 0 || chunks < 0 {
		return nil, fmt.Errorf("%w: %d vectors of %d chunks", ErrMismatch, sets, chunks)
	}
	a := &EachSums{bins: l.bins, nodes: l.nodes, out: make([]*rlwe.Ciphertext, sets), chunks: chunks}
	err := safely(func() error {
		params := l.params.bgv
		for i := range a.out {
			a.out[i] = bgv.NewCiphertext(params, 1, params.MaxLevel())
			a.out[i].IsBatched = false // coefficient encoding, as EncryptPairs
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a, nil
}

// AddEach adds to a the products of chunks k0 to k0+len(sets[i])-1 of
// every vector (sets[i]: vector i's chunks of the range, every set as
// many; k0 the first chunk not yet added) with terms, the range's terms
// (sorted by row, rows numbered over all the vectors' chunks, every one
// in the range). kept may be nil. The sums are left reduced, so that
// nothing lazy crosses two calls.
func (s *BinSummer) AddEach(a *EachSums, sets [][]*rlwe.Ciphertext, k0 int, terms []BinTerm, kept *WeightCache, col int) error {
	l := s.l
	if a.done || a.bins != l.bins || a.nodes != l.nodes || len(sets) != len(a.out) || k0 != a.next {
		return fmt.Errorf("%w: chunks from %d added to sums of other vectors, another layout or at chunk %d", ErrMismatch, k0, a.next)
	}
	n := 0
	if len(sets) > 0 {
		n = len(sets[0])
	}
	for _, cts := range sets {
		if len(cts) != n {
			return fmt.Errorf("%w: vectors of %d and %d ciphertexts summed with the same terms", ErrMismatch, n, len(cts))
		}
	}
	if k0+n > a.chunks {
		return fmt.Errorf("%w: chunks to %d of vectors of %d", ErrMismatch, k0+n, a.chunks)
	}
	for i, t := range terms {
		if t.Row < k0*l.rows || t.Row >= (k0+n)*l.rows || (i > 0 && t.Row < terms[i-1].Row) {
			return fmt.Errorf("%w: terms not sorted by row or beyond the %d ciphertexts' rows", ErrMismatch, k0+n)
		}
	}
	w, err := s.checkNoise(a.weights, terms)
	if err != nil {
		return err
	}
	a.weights, a.next = w, k0+n
	return safely(func() error { return s.addRange(a.out, sets, k0, terms, kept, col) })
}

// addRange adds to out the products of sets' chunks from k0 with terms
// (AddEach's, checked), reducing every lazyProducts chunks and at the end.
func (s *BinSummer) addRange(out []*rlwe.Ciphertext, sets [][]*rlwe.Ciphertext, k0 int, terms []BinTerm, kept *WeightCache, col int) error {
	if len(sets) == 0 {
		return nil
	}
	params := s.l.params.bgv
	lazy, most := 0, lazyProducts(s.rq)
	for j := range sets[0] {
		k := k0 + j
		var chunk []BinTerm
		chunk, terms = splitChunk(terms, (k+1)*s.l.rows)
		w, ok := s.chunkWeights(chunk, k, kept, col)
		if !ok {
			continue
		}
		for i, cts := range sets {
			ct := cts[j]
			if !ct.IsNTT || ct.IsBatched || ct.Level() != params.MaxLevel() {
				return fmt.Errorf("%w: a ciphertext not as EncryptPairs makes them", ErrMismatch)
			}
			for c := range 2 {
				s.rq.MulCoeffsMontgomeryLazyThenAddLazy(ct.Value[c], w, out[i].Value[c])
			}
		}
		if lazy++; lazy == most {
			for _, o := range out {
				reduce(s.rq, o.Value...)
			}
			lazy = 0
		}
	}
	if lazy > 0 {
		for _, o := range out {
			reduce(s.rq, o.Value...) // below each prime, as the next range or mask takes them
		}
	}
	return nil
}

// FinishEach masks a's sums (every chunk added) and returns them, one per
// vector: what SumTermsEach returns for the same chunks and terms.
func (s *BinSummer) FinishEach(a *EachSums) ([]*rlwe.Ciphertext, error) {
	if a.done || a.next != a.chunks || a.bins != s.l.bins || a.nodes != s.l.nodes {
		return nil, fmt.Errorf("%w: sums finished at chunk %d of %d or twice", ErrMismatch, a.next, a.chunks)
	}
	a.done = true
	err := safely(func() error {
		for _, o := range a.out {
			if err := s.mask(o); err != nil {
				return err
			}
			reduce(s.rq, o.Value...) // canonical: digests and encodings depend on it
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return a.out, nil
}
