package transform

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/table"
)

// Direction is an attribute's global invariant (Bu et al., Definition 8):
// every image of an earlier piece lies below (Monotone) or above
// (AntiMonotone) every image of a later one, and every piece that is not
// monochromatic runs the same way.
type Direction string

// The two global invariants.
const (
	Monotone     Direction = "monotone"
	AntiMonotone Direction = "anti-monotone"
)

// Key is the secret of one transformed table: for each recoded column,
// the bijection between its original values and their recodings, with the
// pieces and direction it was built from. With it the custodian decodes a
// tree grown on the recoded table; without it, the recoded table and the
// tree reveal what the package doc's leakage profile lists.
type Key struct {
	Table string
	Class string
	Rows  int
	// Columns are the table's columns in table order; only the Numeric
	// ones (other than the class) are recoded.
	Columns []*ColumnKey
}

// ColumnKey is one column's part of a Key. For a recoded column, Values
// are its distinct original values in increasing order and Images[i] is
// the recoding of Values[i]; Pieces partition the value indices.
type ColumnKey struct {
	Name      string
	Kind      table.Kind
	Direction Direction
	Pieces    []Piece
	Values    []float64
	Images    []float64

	byImage []int32 // value indices in increasing image order (set by check)
	pieceOf []int32 // the piece of each value (set by check)
}

// Recoded reports whether the column's values are recoded.
func (c *ColumnKey) Recoded() bool { return c.Kind == table.Numeric }

// Column returns the key of the named column, or nil.
func (k *Key) Column(name string) *ColumnKey {
	for _, c := range k.Columns {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// index returns the index of original value x in Values.
func (c *ColumnKey) index(x float64) (int, bool) {
	return slices.BinarySearch(c.Values, x)
}

// Encode returns the recoding of original value x; false when x is not in
// the column's active domain.
func (c *ColumnKey) Encode(x float64) (float64, bool) {
	i, ok := c.index(x)
	if !ok {
		return 0, false
	}
	return c.Images[i], true
}

// Decode returns the original value of recoded value y; false when y is
// not the recoding of any value.
func (c *ColumnKey) Decode(y float64) (float64, bool) {
	j := sort.Search(len(c.byImage), func(j int) bool { return c.Images[c.byImage[j]] >= y })
	if j == len(c.byImage) || c.Images[c.byImage[j]] != y {
		return 0, false
	}
	return c.Values[c.byImage[j]], true
}

// ErrKey marks a key file that is malformed or inconsistent.
var ErrKey = errors.New("transform: bad key")

// MaxKeyBytes bounds a key file: a key holds two numbers per distinct value
// of every recoded column.
const MaxKeyBytes = 1 << 30

// keyFormat names the key file format in its "format" field.
const keyFormat = "cohort-transform-key"

type keyFile struct {
	Format  string       `json:"format"`
	Version int          `json:"version"`
	Table   string       `json:"table"`
	Class   string       `json:"class"`
	Rows    int          `json:"rows"`
	Columns []columnFile `json:"columns"`
}

type columnFile struct {
	Name      string     `json:"name"`
	Kind      table.Kind `json:"kind"`
	Direction Direction  `json:"direction,omitempty"`
	Pieces    []Piece    `json:"pieces,omitempty"`
	Values    []float64  `json:"values,omitempty"`
	Images    []float64  `json:"images,omitempty"`
}

// MarshalBinary writes the key file: JSON with the format name and
// version 1, every number in its shortest form that reads back exactly.
func (k *Key) MarshalBinary() ([]byte, error) {
	f := keyFile{Format: keyFormat, Version: 1, Table: k.Table, Class: k.Class, Rows: k.Rows}
	for _, c := range k.Columns {
		f.Columns = append(f.Columns, columnFile{c.Name, c.Kind, c.Direction, c.Pieces, c.Values, c.Images})
	}
	return json.Marshal(f)
}

// ParseKey reads a key file strictly: one JSON object of version 1 with no
// unknown field and nothing after it, whose every recoded column passes
// the checks the transform itself applies (see check). Errors name the
// field, never a value.
func ParseKey(data []byte) (*Key, error) {
	if len(data) > MaxKeyBytes {
		return nil, fmt.Errorf("%w: larger than %d bytes", ErrKey, MaxKeyBytes)
	}
	var f keyFile
	if err := decodeStrict(data, &f); err != nil {
		return nil, fmt.Errorf("%w: not a key file (%w)", ErrKey, err)
	}
	if f.Format != keyFormat || f.Version != 1 {
		return nil, fmt.Errorf("%w: format: want %q version 1", ErrKey, keyFormat)
	}
	if f.Rows < 1 {
		return nil, fmt.Errorf("%w: rows: must be positive", ErrKey)
	}
	k := &Key{Table: f.Table, Class: f.Class, Rows: f.Rows}
	names := map[string]bool{}
	for i, cf := range f.Columns {
		c := &ColumnKey{Name: cf.Name, Kind: cf.Kind, Direction: cf.Direction, Pieces: cf.Pieces, Values: cf.Values, Images: cf.Images}
		if err := checkColumnFile(c, names); err != nil {
			return nil, fmt.Errorf("%w: columns[%d].%w", ErrKey, i, err)
		}
		k.Columns = append(k.Columns, c)
	}
	if c := k.Column(k.Class); c == nil || c.Kind != table.Class {
		return nil, fmt.Errorf("%w: class: names no column of kind class", ErrKey)
	}
	return k, nil
}

// checkColumnFile checks one column entry of a key file; names collects
// the names seen so far.
func checkColumnFile(c *ColumnKey, names map[string]bool) error {
	switch {
	case c.Name == "":
		return errors.New("name: empty")
	case names[c.Name]:
		return errors.New("name: repeats an earlier column")
	case !c.Kind.Valid():
		return errors.New("kind: unknown")
	}
	names[c.Name] = true
	if !c.Recoded() {
		if c.Direction != "" || c.Pieces != nil || c.Values != nil || c.Images != nil {
			return errors.New("kind: a column that is not recoded has no direction, pieces, values or images")
		}
		return nil
	}
	return c.check()
}

// decodeStrict decodes one JSON object into v: no unknown field, nothing
// after it. Its errors quote no input (jsonProblem).
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errors.New(jsonProblem(err))
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the object")
	}
	return nil
}

// jsonProblem describes a JSON decoding error without quoting the input.
func jsonProblem(err error) string {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		return fmt.Sprintf("field %s: want %s", typ.Field, typ.Type)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "truncated JSON"
	}
	// DisallowUnknownFields: `json: unknown field "x"` quotes a field name
	// of the input, which is structure, not data.
	return err.Error()
}
