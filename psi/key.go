package psi

import (
	"encoding/binary"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/cohortdm/cohort/table"
)

// Type says how a join value is compared: as text or as a number.
type Type byte

// Value types. The tag is part of the encoding, so the text "1" and the
// number 1 never encode alike.
const (
	// Text compares values as their exact bytes: no Unicode normalisation,
	// no case folding, no trimming beyond what package table already did.
	Text Type = 1
	// Number compares values as exact decimal numbers: "1.50", "1.5",
	// "+1.5", "15e-1" and "0.15E1" are equal, and so are "100" and "1e2",
	// "-0" and "0". Numbers are parsed as decimals, never through float64,
	// so no two different decimals meet by rounding.
	Number Type = 2
)

func (t Type) String() string {
	switch t {
	case Text:
		return "text"
	case Number:
		return "number"
	}
	return fmt.Sprintf("type(%d)", byte(t))
}

// Bounds on one value, so a key stays small and an exponent cannot blow up
// a comparison.
const (
	// MaxValueLen bounds the bytes of one value (text, or a number's
	// canonical form).
	MaxValueLen = 4096
	// MaxExponent bounds the magnitude of a number's decimal exponent.
	MaxExponent = 1 << 20
	// MaxKeyValues bounds the values in one composite key.
	MaxKeyValues = 64
)

// Value is one typed join value. Build it with TextValue, ParseNumber,
// IntValue or FloatValue; the zero Value is invalid.
type Value struct {
	Type Type
	// canon is the text as given (Text) or the canonical decimal (Number):
	// an optional "-", digits with no leading zero and no trailing zero
	// (or the single digit "0"), then "e" and the exponent in decimal when
	// it is not zero. 1.50 is "15e-1", 100 is "1e2", 0 is "0".
	canon string
}

// String returns the value's canonical text.
func (v Value) String() string { return v.canon }

// TextValue returns s as a text value. s must be valid UTF-8.
func TextValue(s string) (Value, error) {
	if !utf8.ValidString(s) {
		return Value{}, fmt.Errorf("%w: text value is not valid UTF-8", ErrKey)
	}
	if len(s) > MaxValueLen {
		return Value{}, fmt.Errorf("%w: text value of %d bytes, limit %d", ErrKey, len(s), MaxValueLen)
	}
	return Value{Type: Text, canon: s}, nil
}

// IntValue returns the number i.
func IntValue(i int64) Value {
	v, err := ParseNumber(strconv.FormatInt(i, 10))
	if err != nil { // cannot happen: FormatInt writes a plain integer
		panic("psi: internal error: " + err.Error())
	}
	return v
}

// FloatValue returns the number x as its shortest decimal that reads back
// as x (strconv 'g', -1): so 0.1 is the decimal 0.1, equal to ParseNumber("0.1").
// NaN and infinities are refused.
func FloatValue(x float64) (Value, error) {
	return ParseNumber(strconv.FormatFloat(x, 'g', -1, 64))
}

// ParseNumber parses a decimal number as written in a table: an optional
// sign, digits with at most one decimal point (at least one digit), and an
// optional exponent (e or E, optional sign, digits). Anything else (hex,
// underscores, spaces, NaN, Inf) is an error; so is an exponent beyond
// ±MaxExponent.
func ParseNumber(s string) (Value, error) {
	bad := func(why string) (Value, error) {
		return Value{}, fmt.Errorf("%w: number %.40q: %s", ErrKey, s, why)
	}
	if len(s) > MaxValueLen {
		return bad("too long")
	}
	i := 0
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	var digits []byte
	exp := 0 // value = digits × 10^exp
	seenDigit, seenPoint := false, false
scan:
	for ; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			seenDigit = true
			if seenPoint {
				exp-- // a digit after the point divides by ten
			}
			if c == '0' && len(digits) == 0 {
				continue // a leading zero adds nothing
			}
			digits = append(digits, c)
		case c == '.' && !seenPoint:
			seenPoint = true
		default:
			break scan
		}
	}
	if !seenDigit {
		return bad("no digits")
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return bad("unexpected character")
		}
		// ParseInt in base 10 takes an optional sign and digits only.
		e, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil || e > MaxExponent || e < -MaxExponent {
			return bad("bad exponent")
		}
		exp += int(e)
	}
	// Strip trailing zeros into the exponent.
	for len(digits) > 0 && digits[len(digits)-1] == '0' {
		digits = digits[:len(digits)-1]
		exp++
	}
	if len(digits) == 0 {
		return Value{Type: Number, canon: "0"}, nil // -0, 0.00 and 0e5 are all zero
	}
	if exp > MaxExponent || exp < -MaxExponent-MaxValueLen {
		return bad("exponent out of range")
	}
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	b.Write(digits)
	if exp != 0 {
		b.WriteByte('e')
		b.WriteString(strconv.Itoa(exp))
	}
	return Value{Type: Number, canon: b.String()}, nil
}

// maxCanonLen bounds a value's canonical text: a number's canonical form
// can be a few bytes longer than the text it came from ("10" is "1e1").
const maxCanonLen = MaxValueLen + 16

// keyVersion is the first byte of every encoded key, so a future encoding
// can never be mistaken for this one.
const keyVersion = 1

// EncodeKey returns the canonical encoding of a (composite) join key:
//
//	version (1 byte, 1) ‖ count (1 byte) ‖ for each value: type (1 byte) ‖ len (4 bytes, big-endian) ‖ canonical text
//
// Every field is typed and length-prefixed, so two keys encode alike if
// and only if they have the same number of values and each pair has the
// same type and canonical text (DecodeKey inverts it).
func EncodeKey(vals ...Value) ([]byte, error) {
	if len(vals) == 0 || len(vals) > MaxKeyValues {
		return nil, fmt.Errorf("%w: key of %d values (want 1 to %d)", ErrKey, len(vals), MaxKeyValues)
	}
	n := 2
	for _, v := range vals {
		n += 5 + len(v.canon)
	}
	out := make([]byte, 0, n)
	out = append(out, keyVersion, byte(len(vals)))
	for i, v := range vals {
		if v.Type != Text && v.Type != Number {
			return nil, fmt.Errorf("%w: value %d has no type (build values with TextValue or ParseNumber)", ErrKey, i)
		}
		out = append(out, byte(v.Type))
		out = binary.BigEndian.AppendUint32(out, uint32(len(v.canon)))
		out = append(out, v.canon...)
	}
	return out, nil
}

// DecodeKey inverts EncodeKey, checking that b is canonical: a number
// whose text is not in canonical form, bad UTF-8 or trailing bytes are
// errors.
func DecodeKey(b []byte) ([]Value, error) {
	if len(b) < 2 || b[0] != keyVersion {
		return nil, fmt.Errorf("%w: not an encoded key", ErrKey)
	}
	n := int(b[1])
	if n == 0 || n > MaxKeyValues {
		return nil, fmt.Errorf("%w: key of %d values", ErrKey, n)
	}
	b = b[2:]
	vals := make([]Value, 0, n)
	for range n {
		if len(b) < 5 {
			return nil, fmt.Errorf("%w: truncated key", ErrKey)
		}
		t := Type(b[0])
		l := binary.BigEndian.Uint32(b[1:5])
		if uint64(l) > uint64(len(b)-5) || l > maxCanonLen {
			return nil, fmt.Errorf("%w: truncated key", ErrKey)
		}
		s := string(b[5 : 5+l])
		b = b[5+l:]
		var v Value
		var err error
		switch t {
		case Text:
			v, err = TextValue(s)
		case Number:
			v, err = ParseNumber(s)
			if err == nil && v.canon != s {
				err = fmt.Errorf("%w: number %.40q is not canonical", ErrKey, s)
			}
		default:
			err = fmt.Errorf("%w: unknown value type %d", ErrKey, t)
		}
		if err != nil {
			return nil, err
		}
		vals = append(vals, v)
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", ErrKey, len(b))
	}
	return vals, nil
}

// TableKeys returns the encoded key of every row of t over the named
// columns, reading each column's text (Column.Str) as the given type. An
// unparsable number is an error naming the row and column. The keys may
// repeat (many-to-many joins); Intersect works on their distinct values.
func TableKeys(t *table.Table, columns []string, types []Type) ([][]byte, error) {
	if len(columns) != len(types) {
		return nil, fmt.Errorf("%w: %d columns but %d types", ErrKey, len(columns), len(types))
	}
	cols := make([]*table.Column, len(columns))
	for i, name := range columns {
		c, err := t.Column(name)
		if err != nil {
			return nil, fmt.Errorf("psi: %w", err)
		}
		cols[i] = c
	}
	keys := make([][]byte, t.NumRows())
	vals := make([]Value, len(cols))
	for r := range keys {
		for i, c := range cols {
			var err error
			switch types[i] {
			case Text:
				vals[i], err = TextValue(c.Str[r])
			case Number:
				vals[i], err = ParseNumber(c.Str[r])
			default:
				err = fmt.Errorf("%w: unknown type %d", ErrKey, types[i])
			}
			if err != nil {
				return nil, fmt.Errorf("table %s row %d column %s: %w", t.Name, r+1, c.Name, err)
			}
		}
		k, err := EncodeKey(vals...)
		if err != nil {
			return nil, fmt.Errorf("table %s row %d: %w", t.Name, r+1, err)
		}
		keys[r] = k
	}
	return keys, nil
}
