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

// The lattice backend's messages carry bodies of up to 16 MiB. Encode
// copies the body into the encoding and Decode copies it out again, each
// into a fresh, zeroed buffer; over real nodes those copies were a tenth
// of a million-value round's CPU. The node's transport therefore writes a
// message as its envelope's head followed by the caller's body (Encoded,
// no copy) and decodes a frame it owns with DecodeOwned, whose body is a
// sub-slice of the frame (no copy). The bytes on the wire are Encode's.

// Encoded is a message's encoding in two pieces: Head, the msgpack
// envelope up to the body's bytes, and Body, the message's body itself,
// not copied. Head followed by Body is exactly Encode's output.
type Encoded struct {
	Head, Body []byte
}

// Len is the encoding's length in bytes.
func (e Encoded) Len() int { return len(e.Head) + len(e.Body) }

// Bytes joins the pieces into one fresh slice: Encode's output.
func (e Encoded) Bytes() []byte {
	b := make([]byte, 0, e.Len())
	return append(append(b, e.Head...), e.Body...)
}

// EncodeParts is Encode without copying the body: the same checks, the
// same bytes, as Head and the caller's Body. The caller must not change
// the body until the encoding is written.
func EncodeParts(m *Message) (Encoded, error) {
	c := *m // never write to the caller's message: it may be sent to several peers at once
	if c.Version == 0 {
		c.Version = Version
	}
	if c.Type == "" || c.Job == "" || c.Round < 0 || c.Attempt < 0 {
		return Encoded{}, fmt.Errorf("%w: encode: missing type or job, or negative round or attempt", ErrMalformed)
	}
	if err := c.checkFields(); err != nil {
		return Encoded{}, fmt.Errorf("encode: %w", err)
	}
	body := c.Body
	if len(body) > MaxMessageSize {
		return Encoded{}, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(body))
	}
	c.Body = nil
	head, err := msgpack.Marshal(&c)
	if err != nil {
		return Encoded{}, fmt.Errorf("wire: encode %s: %w", m.Type, err)
	}
	// The body is the envelope's last field: a nil body ends the head as
	// msgpack's nil, which a body's bin header replaces.
	if len(head) == 0 || head[len(head)-1] != msgpcode.Nil {
		return Encoded{}, fmt.Errorf("wire: encode %s: the envelope does not end with its body", m.Type)
	}
	if body != nil {
		head = appendBinHeader(head[:len(head)-1], len(body))
	}
	e := Encoded{Head: head, Body: body}
	if e.Len() > MaxMessageSize {
		return Encoded{}, fmt.Errorf("%w: %d bytes", ErrTooLarge, e.Len())
	}
	return e, nil
}

// appendBinHeader appends msgpack's bin header for n bytes in its shortest
// form, as msgpack's encoder writes it.
func appendBinHeader(b []byte, n int) []byte {
	switch {
	case n < 256:
		return append(b, msgpcode.Bin8, byte(n))
	case n <= math.MaxUint16:
		return binary.BigEndian.AppendUint16(append(b, msgpcode.Bin16), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, msgpcode.Bin32), uint32(n))
	}
}

// WriteEncoded frames an encoded message as WriteFrame frames its bytes,
// writing the body from the caller's slice.
func WriteEncoded(w io.Writer, e Encoded) error {
	if e.Len() > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, e.Len())
	}
	head := binary.BigEndian.AppendUint32(make([]byte, 0, 4+len(e.Head)), uint32(e.Len()))
	if _, err := w.Write(append(head, e.Head...)); err != nil {
		return fmt.Errorf("wire: write frame header: %w", err)
	}
	if len(e.Body) == 0 {
		return nil
	}
	if _, err := w.Write(e.Body); err != nil {
		return fmt.Errorf("wire: write frame: %w", err)
	}
	return nil
}

// DecodeOwned is Decode for a frame the caller hands over: it accepts and
// refuses what Decode does, but the message's body is a sub-slice of b
// (its capacity cut at its end) instead of a copy. The caller must not use
// b afterwards; only one message may be decoded from it.
func DecodeOwned(b []byte) (*Message, error) {
	if len(b) > MaxMessageSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(b))
	}
	var env ownedEnvelope
	if err := unmarshalFrom(b, &frameReader{Reader: bytes.NewReader(b), frame: b, owned: true}, &env); err != nil {
		return nil, err
	}
	m := Message{Version: env.Version, Type: env.Type, Job: env.Job, Phase: env.Phase, Round: env.Round,
		Attempt: env.Attempt, Channel: env.Channel, From: env.From, Body: env.Body.b}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// ownedEnvelope is Message with a body that DecodeOwned cuts out of the
// frame; its fields and tags are Message's, so that it decodes the same
// bytes the same way.
type ownedEnvelope struct {
	Version int       `msgpack:"v"`
	Type    string    `msgpack:"t"`
	Job     string    `msgpack:"j"`
	Phase   string    `msgpack:"p"`
	Round   int       `msgpack:"r"`
	Attempt int       `msgpack:"a"`
	Channel string    `msgpack:"c,omitempty"`
	From    string    `msgpack:"f"`
	Body    ownedBody `msgpack:"b"`
}

// ownedBody decodes the envelope's body as DecodeOwnedBytes does: within
// DecodeOwned, a sub-slice of the frame.
type ownedBody struct{ b []byte }

// DecodeMsgpack implements msgpack.CustomDecoder.
func (o *ownedBody) DecodeMsgpack(d *msgpack.Decoder) (err error) {
	o.b, err = decodeOwned(d, true)
	return err
}
