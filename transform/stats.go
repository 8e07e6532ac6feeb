package transform

import "math"

// ColumnStats describe one recoded column as Bu et al.'s Figure 8 does,
// with the two inputs of their safety recipe (§5.4): an attribute is safe
// against the sorting attack when it has many monochromatic values or
// many discontinuities, unsafe when it has few of both.
type ColumnStats struct {
	Column   string
	Distinct int
	// Integer: every value is a whole number.
	Integer bool
	// Width is the dynamic range width: max − min, plus 1 for integer
	// columns (Figure 8's convention: #discontinuities = width − distinct).
	Width float64
	// Discontinuities are the whole numbers inside the range that no row
	// holds (integer columns; −1 otherwise).
	Discontinuities int
	Pieces          int
	// MonoPieces are the pieces recoded by a random bijection; MonoValues
	// the distinct values inside them; AvgMonoLen their mean length in
	// distinct values.
	MonoPieces int
	MonoValues int
	AvgMonoLen float64
}

// MonoShare is the fraction of distinct values inside monochromatic
// pieces (Figure 8's "total % of mono. values").
func (s ColumnStats) MonoShare() float64 { return float64(s.MonoValues) / float64(s.Distinct) }

// Stats computes a recoded column's statistics.
func (c *ColumnKey) Stats() ColumnStats {
	n := len(c.Values)
	s := ColumnStats{Column: c.Name, Distinct: n, Pieces: len(c.Pieces), Integer: true, Discontinuities: -1}
	if n == 0 {
		return s
	}
	for _, v := range c.Values {
		s.Integer = s.Integer && v == math.Trunc(v)
	}
	s.Width = c.Values[n-1] - c.Values[0]
	if s.Integer {
		s.Width++
		s.Discontinuities = int(s.Width) - n
	}
	for _, p := range c.Pieces {
		if p.Mono {
			s.MonoPieces++
			s.MonoValues += p.Len
		}
	}
	if s.MonoPieces > 0 {
		s.AvgMonoLen = float64(s.MonoValues) / float64(s.MonoPieces)
	}
	return s
}
