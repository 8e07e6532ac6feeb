package sjc

import (
	"encoding/binary"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Parts are kept in a party's data dir after every step (the session's
// state), and a fact table's Parts are large: msgpack's element-by-element
// array encoding cost more than the step's own work. A Part is encoded as
// a two-element array of binary strings instead: its rows as little-endian
// uint32s and its class counts as little-endian uint64s.

// EncodeMsgpack implements msgpack.CustomEncoder.
func (p Part) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeArrayLen(2); err != nil {
		return err
	}
	rows := make([]byte, 0, 4*len(p.Rows))
	for _, r := range p.Rows {
		rows = binary.LittleEndian.AppendUint32(rows, uint32(r))
	}
	if err := enc.EncodeBytes(rows); err != nil {
		return err
	}
	cls := make([]byte, 0, 8*len(p.Cls))
	for _, c := range p.Cls {
		cls = binary.LittleEndian.AppendUint64(cls, c)
	}
	return enc.EncodeBytes(cls)
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
	if len(rows)%4 != 0 || len(cls)%8 != 0 {
		return fmt.Errorf("%w: a kept Part has %d row bytes and %d count bytes", ErrSummary, len(rows), len(cls))
	}
	*p = Part{}
	if len(rows) > 0 {
		p.Rows = make([]int32, len(rows)/4)
		for i := range p.Rows {
			p.Rows[i] = int32(binary.LittleEndian.Uint32(rows[4*i:]))
		}
	}
	if len(cls) > 0 {
		p.Cls = make([]uint64, len(cls)/8)
		for i := range p.Cls {
			p.Cls[i] = binary.LittleEndian.Uint64(cls[8*i:])
		}
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
