package wire

import (
	"encoding/binary"
	"fmt"
	"io"
)

// WriteFrame writes b with a 4-byte big-endian length prefix.
func WriteFrame(w io.Writer, b []byte) error {
	if len(b) > MaxMessageSize {
		return fmt.Errorf("%w: %d bytes", ErrTooLarge, len(b))
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(b)))
	if _, err := w.Write(hdr[:]); err != nil {
		return fmt.Errorf("wire: write frame header: %w", err)
	}
	if _, err := w.Write(b); err != nil {
		return fmt.Errorf("wire: write frame: %w", err)
	}
	return nil
}

// ReadFrame reads one length-prefixed frame of at most limit bytes. The
// length is checked before anything is allocated.
func ReadFrame(r io.Reader, limit int) ([]byte, error) {
	if limit < 0 {
		return nil, fmt.Errorf("%w: negative frame limit %d", ErrTooLarge, limit)
	}
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, fmt.Errorf("wire: read frame header: %w", err)
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if uint64(n) > uint64(limit) {
		return nil, fmt.Errorf("%w: frame of %d bytes, limit %d", ErrTooLarge, n, limit)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF && n > 0 {
			err = io.ErrUnexpectedEOF // the header promised a body: the frame was cut
		}
		return nil, fmt.Errorf("wire: read frame body: %w", err)
	}
	return b, nil
}

// WriteMessage encodes and frames m, writing its body from m.Body.
func WriteMessage(w io.Writer, m *Message) error {
	e, err := EncodeParts(m)
	if err != nil {
		return err
	}
	return WriteEncoded(w, e)
}

// ReadMessage reads and decodes one framed message. The frame is read into
// a buffer of its own, so the message's body is a part of it, not a copy
// (DecodeOwned).
func ReadMessage(r io.Reader) (*Message, error) {
	b, err := ReadFrame(r, MaxMessageSize)
	if err != nil {
		return nil, err
	}
	return DecodeOwned(b)
}
