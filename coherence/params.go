package coherence

import (
	"errors"
	"fmt"
	"math"
)

// Params are the privacy parameters of (h,k,p)-coherence (Xu, ch. 4,
// Definition 5): a public itemset α with 1 ≤ |α| ≤ p that some
// transaction holds is a mole when Sup(α) < k or BPr(α) > h.
type Params struct {
	// H bounds the breach probability, 0 < h ≤ 1. It is read to six
	// decimal places (h = ⌊10⁶h + ½⌋ / 10⁶), so that comparisons are exact.
	H float64
	// K bounds the size of every cohort from below, k ≥ 2.
	K int
	// P is the attacker's power, the most public items known, p ≥ 1; 0
	// means unlimited.
	P int
}

// Nuggets are the parameters of itemset utility (Definition 7): an itemset
// (of any items) with Sup ≥ K and at most P items is a nugget.
type Nuggets struct {
	K int // k' ≥ 2
	P int // p' ≥ 1; 0 means unlimited
}

// ErrParams means parameters out of range.
var ErrParams = errors.New("coherence: bad parameters")

// hDen is the denominator h is read with.
const hDen = 1_000_000

func (p Params) check() error {
	switch {
	case !(p.H > 0 && p.H <= 1):
		return fmt.Errorf("%w: h must be in (0, 1]", ErrParams)
	case p.K < 2:
		return fmt.Errorf("%w: k must be at least 2", ErrParams)
	case p.P < 0:
		return fmt.Errorf("%w: p must be at least 1 (0 for unlimited)", ErrParams)
	}
	return nil
}

func (n Nuggets) check() error {
	switch {
	case n.K < 2:
		return fmt.Errorf("%w: k' must be at least 2", ErrParams)
	case n.P < 0:
		return fmt.Errorf("%w: p' must be at least 1 (0 for unlimited)", ErrParams)
	}
	return nil
}

// hNum is h's numerator over hDen.
func (p Params) hNum() int64 { return int64(math.Floor(p.H*hDen + 0.5)) }

// breaches reports whether count/sup > h, exactly.
func (p Params) breaches(count, sup int) bool {
	return int64(count)*hDen > p.hNum()*int64(sup)
}

// fits reports whether an itemset of size n is within length bound len
// (0 = unlimited).
func fits(n, length int) bool { return length == 0 || n <= length }
