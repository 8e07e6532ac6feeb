package wire

import (
	"bytes"
	"fmt"
	"io"

	"github.com/vmihailenco/msgpack/v5"
)

// Bins decoded without a copy. A body of boosting's lattice messages is a
// list of ciphertext encodings of up to 33 MB in all, and msgpack's []byte
// decoder copies each into a fresh, zeroed buffer: a third copy of bytes
// the transport already holds, and garbage of the same size. A caller that
// owns the payload decodes it with UnmarshalOwned, and a field of type
// Blobs (or a decoder that calls DecodeOwnedBytes) is then sub-slices of
// the payload. The bytes on the wire are a [][]byte's, and Unmarshal
// decodes them as copies, as before.

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
