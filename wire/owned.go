package wire

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"math"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"
)

// Bins decoded without a copy, and written in place. A body of boosting's lattice messages is a
// list of ciphertext encodings of up to 33 MB in all, and msgpack's []byte
// decoder copies each into a fresh, zeroed buffer: a third copy of bytes
// the transport already holds, and garbage of the same size. A caller that
// owns the payload decodes it with UnmarshalOwned, and a field of type
// Blobs (or a decoder that calls DecodeOwnedBytes) is then sub-slices of
// the payload. The bytes on the wire are a [][]byte's, and Unmarshal
// decodes them as copies, as before. The sender's side is MarshalBlobs:
// the blobs are written by their maker straight into the payload, not
// made apart and then copied in by msgpack's encoder.

// frameReader reads the payload being decoded; msgpack's decoder reads it
// directly (it is an io.ByteScanner), so its position is the decoder's,
// and an owned bin cuts itself out of frame there.
type frameReader struct {
	*bytes.Reader
	frame []byte
	owned bool // the caller handed frame over: bins may be sub-slices of it
}

// UnmarshalOwned is Unmarshal for a payload the caller hands over: the
// same checks and results, but Blobs fields (and DecodeOwnedBytes) are
// sub-slices of b, their capacity cut at their end, instead of copies. The
// caller must not change b afterwards.
func UnmarshalOwned(b []byte, v any) error {
	return unmarshalFrom(b, &frameReader{Reader: bytes.NewReader(b), frame: b, owned: true}, v)
}

// DecodeOwnedBytes decodes a msgpack bin (or str, or nil), as msgpack's
// []byte decoder does: within UnmarshalOwned or DecodeOwned as a sub-slice
// of the payload, elsewhere as a copy. For a type's DecodeMsgpack.
func DecodeOwnedBytes(d *msgpack.Decoder) ([]byte, error) {
	return decodeOwned(d, false)
}

// decodeOwned is DecodeOwnedBytes; strict refuses a decoder that does not
// read an owned payload instead of copying.
func decodeOwned(d *msgpack.Decoder, strict bool) ([]byte, error) {
	fr, ok := d.Buffered().(*frameReader)
	if !ok || !fr.owned {
		if strict {
			return nil, fmt.Errorf("%w: a body outside its frame", ErrMalformed)
		}
		return d.DecodeBytes()
	}
	n, err := d.DecodeBytesLen()
	if err != nil || n == -1 {
		return nil, err
	}
	if n > fr.Len() {
		return nil, fmt.Errorf("%w: a bin of %d bytes, %d left", ErrMalformed, n, fr.Len())
	}
	off := len(fr.frame) - fr.Len()
	if _, err := fr.Seek(int64(n), io.SeekCurrent); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	return fr.frame[off : off+n : off+n], nil
}

// Blobs is a list of byte strings that UnmarshalOwned decodes as
// sub-slices of its payload (DecodeOwnedBytes); encoded as a [][]byte.
type Blobs [][]byte

// DecodeMsgpack implements msgpack.CustomDecoder.
func (b *Blobs) DecodeMsgpack(d *msgpack.Decoder) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n == -1 {
		*b = nil
		return nil
	}
	out := make([][]byte, n) // checkStructure bounded n by the payload's length
	for k := range out {
		if out[k], err = DecodeOwnedBytes(d); err != nil {
			return err
		}
	}
	*b = out
	return nil
}

// MarshalBlobs is Marshal of v with its last field, key, a Blobs of n
// blobs of size bytes each, which put writes in place (dst is blob k,
// within the payload): the bytes Marshal gives for v with those blobs, in
// one buffer of the payload's length, without the blobs existing apart
// first. v must have that field nil, and as its encoding's last.
func MarshalBlobs(v any, key string, n, size int, put func(k int, dst []byte) error) ([]byte, error) {
	head, err := Marshal(v)
	if err != nil {
		return nil, err
	}
	tail, err := Marshal(map[string]any{key: nil}) // a one-entry map: its header, key, nil
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(head, tail[1:]) {
		return nil, fmt.Errorf("wire: marshal: the payload does not end with a nil %q", key)
	}
	head = head[:len(head)-1] // the nil
	bin := len(appendBinHeader(nil, size)) + size
	b := make([]byte, 0, len(head)+len(appendArrayHeader(nil, n))+n*bin)
	b = appendArrayHeader(append(b, head...), n)
	for k := range n {
		b = appendBinHeader(b, size)
		at := len(b)
		b = b[:at+size]
		if err := put(k, b[at:at+size:at+size]); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// appendArrayHeader appends msgpack's array header for n elements in its
// shortest form, as msgpack's encoder writes it.
func appendArrayHeader(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, msgpcode.FixedArrayLow|byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgpcode.Array16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, msgpcode.Array32), uint32(n))
	}
}
