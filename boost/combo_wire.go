package boost

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// A ComboSummary's msgpack encoding, written and read by hand. The bytes
// are those msgpack's reflection writes for the struct (a map of its
// three fields by tag, each ComboCount a map of its two), so peers of
// either make read each other. Reflection allocated a string per join
// value and per combo and a slice per value: on a9a, 32,561 values a
// level, about 11 ms of every level on the class holder's critical path
// to read and 6 ms on the table's party's to write. Here the strings'
// bytes are read into one buffer and the entries into one slice, each
// value's and combo's a part of them.

// EncodeMsgpack implements msgpack.CustomEncoder: reflection's bytes.
func (cs ComboSummary) EncodeMsgpack(enc *msgpack.Encoder) error {
	if err := enc.EncodeMapLen(3); err != nil {
		return err
	}
	if err := enc.EncodeString("edge"); err != nil {
		return err
	}
	if err := enc.EncodeInt(int64(cs.Edge)); err != nil {
		return err
	}
	if err := enc.EncodeString("values"); err != nil {
		return err
	}
	if err := encodeStrings(enc, cs.Values); err != nil {
		return err
	}
	if err := enc.EncodeString("entries"); err != nil {
		return err
	}
	if cs.Entries == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeArrayLen(len(cs.Entries)); err != nil {
		return err
	}
	for _, es := range cs.Entries {
		if err := encodeCounts(enc, es); err != nil {
			return err
		}
	}
	return nil
}

// encodeStrings writes ss as reflection writes a []string: nil as nil.
func encodeStrings(enc *msgpack.Encoder, ss []string) error {
	if ss == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeArrayLen(len(ss)); err != nil {
		return err
	}
	for _, s := range ss {
		if err := enc.EncodeString(s); err != nil {
			return err
		}
	}
	return nil
}

// encodeCounts writes es as reflection writes a []ComboCount.
func encodeCounts(enc *msgpack.Encoder, es []ComboCount) error {
	if es == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeArrayLen(len(es)); err != nil {
		return err
	}
	for _, e := range es {
		if err := enc.EncodeMapLen(2); err != nil {
			return err
		}
		if err := enc.EncodeString("combo"); err != nil {
			return err
		}
		if err := enc.EncodeString(e.Combo); err != nil {
			return err
		}
		if err := enc.EncodeString("count"); err != nil {
			return err
		}
		if err := enc.EncodeUint64(e.Count); err != nil { // as reflection: 9 bytes
			return err
		}
	}
	return nil
}

// DecodeMsgpack implements msgpack.CustomDecoder: what reflection reads
// into the struct (unknown fields refused, as wire.Unmarshal asks; a key
// given twice, the last), but for ComboCounts encoded as arrays, which no
// party writes and which are refused.
func (cs *ComboSummary) DecodeMsgpack(dec *msgpack.Decoder) error {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return err
	}
	*cs = ComboSummary{}
	var text comboText
	var values []span
	var entries [][]countSpan
	for range max(n, 0) {
		key, err := text.key(dec)
		if err != nil {
			return err
		}
		switch key {
		case "edge":
			if cs.Edge, err = dec.DecodeInt(); err != nil {
				return err
			}
		case "values":
			if values, err = text.strings(dec); err != nil {
				return err
			}
		case "entries":
			if entries, err = text.entries(dec); err != nil {
				return err
			}
		default:
			return fmt.Errorf("msgpack: unknown field %q in a combo summary", key)
		}
	}
	s := string(text.buf) // every value's and combo's bytes: one string
	cs.Values = stringsOf(s, values)
	if entries != nil {
		cs.Entries = make([][]ComboCount, len(entries))
		total := 0
		for _, es := range entries {
			total += len(es)
		}
		flat := make([]ComboCount, 0, total)
		for i, es := range entries {
			if es == nil {
				continue
			}
			lo := len(flat)
			for _, e := range es {
				flat = append(flat, ComboCount{Combo: s[e.lo:e.hi], Count: e.count})
			}
			cs.Entries[i] = flat[lo:len(flat):len(flat)]
		}
	}
	return nil
}

// comboText gathers the strings of a combo summary as it is read: their
// bytes one after the other, each string a span of them.
type comboText struct {
	buf     []byte
	scratch [8]byte // a field's name
}

// key reads a field's name as DecodeString would, into scratch for the
// names the summary has: a string only for a name none of them is (an
// error to come), not one for each of 32,561 entries' two fields.
func (t *comboText) key(dec *msgpack.Decoder) (string, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil || n <= 0 {
		return "", err
	}
	if n > len(t.scratch) {
		b := make([]byte, n)
		err := dec.ReadFull(b)
		return string(b), err
	}
	b := t.scratch[:n]
	if err := dec.ReadFull(b); err != nil {
		return "", err
	}
	for _, k := range [...]string{"edge", "values", "entries", "combo", "count"} {
		if string(b) == k {
			return k, nil
		}
	}
	return string(b), nil
}

type span struct{ lo, hi int }

// stringsOf is each span's part of all (nil for nil).
func stringsOf(all string, spans []span) []string {
	if spans == nil {
		return nil
	}
	out := make([]string, len(spans))
	for i, v := range spans {
		out[i] = all[v.lo:v.hi]
	}
	return out
}

type countSpan struct {
	span
	count uint64
}

// string reads a string (or bin, or nil: empty), as DecodeString does.
func (t *comboText) string(dec *msgpack.Decoder) (span, error) {
	n, err := dec.DecodeBytesLen()
	if err != nil || n <= 0 {
		return span{len(t.buf), len(t.buf)}, err
	}
	lo := len(t.buf)
	t.buf = append(t.buf, make([]byte, n)...)
	if err := dec.ReadFull(t.buf[lo:]); err != nil {
		return span{}, err
	}
	return span{lo, lo + n}, nil
}

// strings reads a []string: nil for nil. Its length was checked against
// the payload's (wire.Unmarshal), so it sizes the slice.
func (t *comboText) strings(dec *msgpack.Decoder) ([]span, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([]span, n)
	for i := range out {
		if out[i], err = t.string(dec); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// entries reads a [][]ComboCount: nil for nil, each inner nil for nil.
func (t *comboText) entries(dec *msgpack.Decoder) ([][]countSpan, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	out := make([][]countSpan, n)
	for i := range out {
		m, err := dec.DecodeArrayLen()
		if err != nil {
			return nil, err
		}
		if m < 0 {
			continue
		}
		out[i] = make([]countSpan, m)
		for j := range out[i] {
			if out[i][j], err = t.count(dec); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// count reads a ComboCount encoded as a map (nil: the zero ComboCount).
func (t *comboText) count(dec *msgpack.Decoder) (countSpan, error) {
	n, err := dec.DecodeMapLen()
	if err != nil {
		return countSpan{}, err
	}
	c := countSpan{span: span{len(t.buf), len(t.buf)}}
	for range max(n, 0) {
		key, err := t.key(dec)
		if err != nil {
			return countSpan{}, err
		}
		switch key {
		case "combo":
			if c.span, err = t.string(dec); err != nil {
				return countSpan{}, err
			}
		case "count":
			if c.count, err = dec.DecodeUint64(); err != nil {
				return countSpan{}, err
			}
		default:
			return countSpan{}, fmt.Errorf("msgpack: unknown field %q in a combo count", key)
		}
	}
	return c, nil
}

// wireStrings is a []string whose msgpack (reflection's bytes: an array
// of strings, nil as nil) is read into one buffer: a lattice down
// message's join values, 32,561 on a9a at every level, read on the
// table's party's critical path before its sums can start.
type wireStrings []string

// EncodeMsgpack implements msgpack.CustomEncoder.
func (s wireStrings) EncodeMsgpack(enc *msgpack.Encoder) error { return encodeStrings(enc, s) }

// DecodeMsgpack implements msgpack.CustomDecoder.
func (s *wireStrings) DecodeMsgpack(dec *msgpack.Decoder) error {
	var t comboText
	spans, err := t.strings(dec)
	if err != nil {
		*s = nil
		return err
	}
	*s = stringsOf(string(t.buf), spans)
	return nil
}

// wireStringLists is a [][]string read as wireStrings is: a lattice down
// message's combos, entry by entry.
type wireStringLists [][]string

// EncodeMsgpack implements msgpack.CustomEncoder.
func (ls wireStringLists) EncodeMsgpack(enc *msgpack.Encoder) error {
	if ls == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeArrayLen(len(ls)); err != nil {
		return err
	}
	for _, l := range ls {
		if err := encodeStrings(enc, l); err != nil {
			return err
		}
	}
	return nil
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (ls *wireStringLists) DecodeMsgpack(dec *msgpack.Decoder) error {
	*ls = nil
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return err
	}
	var t comboText
	lists := make([][]span, n)
	total := 0
	for i := range lists {
		if lists[i], err = t.strings(dec); err != nil {
			return err
		}
		total += len(lists[i])
	}
	all, flat := string(t.buf), make([]string, 0, total)
	*ls = make(wireStringLists, n)
	for i, l := range lists {
		if l == nil {
			continue
		}
		lo := len(flat)
		for _, v := range l {
			flat = append(flat, all[v.lo:v.hi])
		}
		(*ls)[i] = flat[lo:len(flat):len(flat)]
	}
	return nil
}
