package kde

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// ErrSample means a published sample's bytes are not rows of the schema:
// a length that is no whole number of rows, or a value that is not
// finite.
var ErrSample = errors.New("kde: malformed sample")

// encodeRows packs rows of d columns row by row, each value a
// little-endian float64: a third of msgpack's size for Adult's numbers,
// and one decoder to check.
func encodeRows(rows [][]float64, d int) []byte {
	b := make([]byte, 0, len(rows)*d*8)
	for _, r := range rows {
		for _, x := range r[:d] {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
	}
	return b
}

// decodeRows unpacks encodeRows's bytes, which come from another party:
// it refuses a length that is no whole number of rows and any value that
// is NaN or infinite, naming neither the value nor its place.
func decodeRows(b []byte, d int) ([][]float64, error) {
	if d <= 0 || len(b)%(8*d) != 0 {
		return nil, fmt.Errorf("%w: %d bytes are no whole number of rows of %d columns", ErrSample, len(b), d)
	}
	rows := make([][]float64, len(b)/(8*d))
	for j := range rows {
		r := make([]float64, d)
		for i := range r {
			x := math.Float64frombits(binary.LittleEndian.Uint64(b[(j*d+i)*8:]))
			if math.IsNaN(x) || math.IsInf(x, 0) {
				return nil, fmt.Errorf("%w: a value that is not finite", ErrSample)
			}
			r[i] = x
		}
		rows[j] = r
	}
	return rows, nil
}
