package sjc

import (
	"encoding/binary"
	"fmt"
	"math"

	"github.com/vmihailenco/msgpack/v5"
)

// Parts are kept in a party's data dir after every step (the session's
// state), and a fact table's Parts are large: every level rewrites all of
// its rows. msgpack's element-by-element arrays cost more than the step's
// own work, so a Part is encoded as a two-element array of binary strings:
// its rows as zigzag varints of the difference to the previous row (rows
// ascend, so mostly one byte), and its class counts as uvarints (a fact
// row's counts are mostly 0 and 1, one byte each).

// EncodeMsgpack implements msgpack.CustomEncoder.
func (p Part) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	buf := make([]byte, 0, len(p.Rows)+len(p.Cls)+16)
	prev := int64(0)
	for _, r := range p.Rows {
		buf = binary.AppendVarint(buf, int64(r)-prev)
		prev = int64(r)
	}
	if err := enc.EncodeBytes(buf); err != nil {
		return err
	}
	return enc.EncodeBytes(appendUvarints(buf[:0], p.Cls))
}

// DecodeMsgpack implements msgpack.CustomDecoder. It checks the encoding's
// shape only; Local.checkPart checks a kept Part against its table.
func (p *Part) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 2 {
		return fmt.Errorf("%w: a kept Part has %d fields, not 2", ErrSummary, n)
	}
	rows, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	cls, err := dec.DecodeBytes()
	if err != nil {
		return err
	}
	*p = Part{}
	prev := int64(0)
	for len(rows) > 0 {
		d, k := binary.Varint(rows)
		if k <= 0 {
			return fmt.Errorf("%w: a kept Part's rows are not varints", ErrSummary)
		}
		rows = rows[k:]
		prev += d
		if prev < 0 || prev > math.MaxInt32 {
			return fmt.Errorf("%w: a kept Part names row %d", ErrSummary, prev)
		}
		p.Rows = append(p.Rows, int32(prev))
	}
	var ok bool
	if p.Cls, ok = readUvarints(cls); !ok {
		return fmt.Errorf("%w: a kept Part's counts are not uvarints", ErrSummary)
	}
	return nil
}

// checkPart checks that a Part read back from kept state fits the table:
// u counts per row, every row in range.
func (l *Local) checkPart(p Part) error {
	if len(p.Cls) != len(p.Rows)*l.u {
		return fmt.Errorf("%w: table %q: a kept Part has %d counts for %d rows", ErrSummary, l.info.Name, len(p.Cls), len(p.Rows))
	}
	n := int32(l.t.NumRows())
	for _, r := range p.Rows {
		if r < 0 || r >= n {
			return fmt.Errorf("%w: table %q: a kept Part names row %d of %d", ErrSummary, l.info.Name, r, n)
		}
	}
	return nil
}
