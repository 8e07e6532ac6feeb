package transform

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
)

// check verifies a recoded column's key, the checks of the research notes'
// "strict validation after encoding" plus two of ours, written apart from
// the code that draws the images:
//
//   - values are finite and strictly increasing; images are finite and
//     pairwise distinct, so the recoding is a bijection on the active domain;
//   - pieces partition the values, in order;
//   - the global invariant (Bu et al., Definition 8): in image order the
//     pieces follow one another in value order (Monotone) or in reverse
//     (AntiMonotone), each in one contiguous block;
//   - every piece that is not Mono is strictly monotone in the direction;
//   - ours, so that a threshold decodes from the key alone (DecodeTree):
//     each Mono piece of more than one value is separated from the images
//     on either side of it by more than its own width, so a midpoint
//     between two values of different pieces never falls inside it;
//   - ours, so that a miner that reads values as float32 and takes values
//     closer than 1e-7 for equal (scikit-learn does both) sees the same
//     order: consecutive images are at least two float32 steps and, as
//     float32, more than 1e-6 apart.
//
// It also sets the derived indexes Decode and the decoders use.
func (c *ColumnKey) check() error {
	n := len(c.Values)
	switch {
	case n == 0:
		return errors.New("values: empty")
	case len(c.Images) != n:
		return errors.New("images: not one per value")
	case c.Direction != Monotone && c.Direction != AntiMonotone:
		return errors.New("direction: want monotone or anti-monotone")
	}
	for i := range n {
		if !finite(c.Values[i]) || (i > 0 && c.Values[i] <= c.Values[i-1]) {
			return fmt.Errorf("values[%d]: not finite and strictly increasing", i)
		}
		if !finite(c.Images[i]) {
			return fmt.Errorf("images[%d]: not finite", i)
		}
	}
	if err := c.prepare(); err != nil {
		return err
	}
	for j := 1; j < n; j++ {
		a, b := c.Images[c.byImage[j-1]], c.Images[c.byImage[j]]
		if a == b {
			return fmt.Errorf("images[%d]: repeats another image", c.byImage[j])
		}
		if !float32Apart(a, b) {
			return fmt.Errorf("images[%d]: closer to the next image than two float32 steps or 1e-6", c.byImage[j-1])
		}
	}
	if err := c.checkInvariant(); err != nil {
		return err
	}
	return c.checkMonoGaps()
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// float32Apart reports whether a < b stay at least two float32 steps and,
// as float32, more than 1e-6 apart.
func float32Apart(a, b float64) bool {
	a32, b32 := float32(a), float32(b)
	up := math.Nextafter32(math.Nextafter32(a32, float32(math.Inf(1))), float32(math.Inf(1)))
	return !math.IsInf(float64(a32), 0) && b32 >= up && float64(b32)-float64(a32) > 1e-6
}

// prepare indexes the pieces (see indexPieces) and orders the values by
// image.
func (c *ColumnKey) prepare() error {
	if err := c.indexPieces(); err != nil {
		return err
	}
	c.byImage = make([]int32, len(c.Values))
	for i := range c.byImage {
		c.byImage[i] = int32(i)
	}
	slices.SortFunc(c.byImage, func(a, b int32) int { return cmp.Compare(c.Images[a], c.Images[b]) })
	return nil
}

// indexPieces checks that the pieces partition the values in order and
// records each value's piece.
func (c *ColumnKey) indexPieces() error {
	c.pieceOf = make([]int32, len(c.Values))
	next := 0
	for p, pc := range c.Pieces {
		if pc.Start != next || pc.Len < 1 || pc.Len > len(c.Values)-next {
			return fmt.Errorf("pieces[%d]: does not continue the partition of the values", p)
		}
		for i := pc.Start; i < pc.Start+pc.Len; i++ {
			c.pieceOf[i] = int32(p)
		}
		next += pc.Len
	}
	if next != len(c.Values) {
		return errors.New("pieces: do not cover every value")
	}
	return nil
}

// checkInvariant checks Definition 8 and the direction of the pieces that
// are not Mono.
func (c *ColumnKey) checkInvariant() error {
	step := int32(1)
	if c.Direction == AntiMonotone {
		step = -1
	}
	for j := 1; j < len(c.byImage); j++ {
		a, b := c.pieceOf[c.byImage[j-1]], c.pieceOf[c.byImage[j]]
		if a != b && b != a+step {
			return fmt.Errorf("pieces[%d]: images break the global %s invariant", b, c.Direction)
		}
	}
	for p, pc := range c.Pieces {
		if pc.Mono {
			continue
		}
		for i := pc.Start + 1; i < pc.Start+pc.Len; i++ {
			if (c.Images[i] > c.Images[i-1]) != (step > 0) {
				return fmt.Errorf("pieces[%d]: not %s although not mono", p, c.Direction)
			}
		}
	}
	return nil
}

// checkMonoGaps checks that each Mono piece's images lie further from the
// nearest image of another piece, on both sides, than the piece is wide.
func (c *ColumnKey) checkMonoGaps() error {
	pos := make([]int, len(c.Values)) // position of each value in image order
	for j, i := range c.byImage {
		pos[i] = j
	}
	for p, pc := range c.Pieces {
		if !pc.Mono || pc.Len < 2 {
			continue
		}
		lo, hi := len(pos), -1
		for i := pc.Start; i < pc.Start+pc.Len; i++ {
			lo, hi = min(lo, pos[i]), max(hi, pos[i])
		}
		width := c.Images[c.byImage[hi]] - c.Images[c.byImage[lo]]
		if lo > 0 && c.Images[c.byImage[lo]]-c.Images[c.byImage[lo-1]] <= width {
			return fmt.Errorf("pieces[%d]: mono piece closer to the piece below it than its width", p)
		}
		if hi < len(pos)-1 && c.Images[c.byImage[hi+1]]-c.Images[c.byImage[hi]] <= width {
			return fmt.Errorf("pieces[%d]: mono piece closer to the piece above it than its width", p)
		}
	}
	return nil
}

// checkClassString checks Bu et al.'s Lemma 1 on a recoded column: the
// class string of the rows sorted by recoded value y equals the class
// string sorted by original value x (Monotone) or its reverse
// (AntiMonotone). Rows with equal values form a block whose labels
// compare as a multiset (the research notes' remark on Lemma 1), so both
// sorts order a block by label. It is the table-level check of every
// transform, written without the pieces.
func checkClassString(x, y []float64, cls []int32, dir Direction) error {
	order := func(key []float64, desc bool) []int32 {
		o := make([]int32, len(key))
		for i := range o {
			o[i] = int32(i)
		}
		slices.SortFunc(o, func(a, b int32) int {
			c := cmp.Compare(key[a], key[b])
			if desc {
				c = -c
			}
			if c != 0 {
				return c
			}
			return cmp.Compare(cls[a], cls[b])
		})
		return o
	}
	orig := order(x, dir == AntiMonotone)
	rec := order(y, false)
	for i := range orig {
		if cls[orig[i]] != cls[rec[i]] {
			return fmt.Errorf("class string differs at position %d", i)
		}
	}
	return nil
}
