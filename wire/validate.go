package wire

import (
	"encoding/binary"
	"fmt"
)

// maxDepth bounds nesting of arrays and maps in anything we decode. Our own
// messages nest a handful of levels; hostile input nested deeper could
// exhaust the decoder's stack.
const maxDepth = 64

// checkStructure walks msgpack bytes without decoding them and refuses
// input that could make the decoder allocate or recurse out of proportion
// to its size: every array or map must claim no more elements than there
// are bytes left (each element takes at least one byte), nesting stays
// within maxDepth, and there is exactly one top-level value.
func checkStructure(b []byte) error {
	pending := []int{1} // values still expected at each open nesting level
	i := 0
	for len(pending) > 0 {
		if pending[len(pending)-1] == 0 {
			pending = pending[:len(pending)-1]
			continue
		}
		pending[len(pending)-1]--
		if i >= len(b) {
			return fmt.Errorf("%w: truncated msgpack at byte %d", ErrMalformed, i)
		}
		tag := b[i]
		i++
		var skip, children int
		switch {
		case tag <= 0x7f || tag >= 0xe0 || tag == 0xc0 || tag == 0xc2 || tag == 0xc3:
		case tag >= 0x80 && tag <= 0x8f:
			children = 2 * int(tag&0x0f)
		case tag >= 0x90 && tag <= 0x9f:
			children = int(tag & 0x0f)
		case tag >= 0xa0 && tag <= 0xbf:
			skip = int(tag & 0x1f)
		default:
			n, size, err := lengthOf(tag, b[i:])
			if err != nil {
				return fmt.Errorf("%w: at byte %d: %v", ErrMalformed, i-1, err)
			}
			i += size
			switch tag {
			case 0xdc, 0xdd:
				children = n
			case 0xde, 0xdf:
				children = 2 * n
			default:
				skip = n
			}
		}
		if skip > len(b)-i {
			return fmt.Errorf("%w: value at byte %d claims %d bytes, %d left", ErrMalformed, i, skip, len(b)-i)
		}
		i += skip
		if children > 0 {
			if children > len(b)-i {
				return fmt.Errorf("%w: container at byte %d claims %d elements, %d bytes left", ErrMalformed, i, children, len(b)-i)
			}
			if len(pending) >= maxDepth {
				return fmt.Errorf("%w: nesting deeper than %d", ErrMalformed, maxDepth)
			}
			pending = append(pending, children)
		}
	}
	if i != len(b) {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, len(b)-i)
	}
	return nil
}

// lengthOf reads the length field that follows tag. It returns the payload
// length (or element count for containers) and the size of the length field
// (including an ext type byte).
func lengthOf(tag byte, rest []byte) (n, size int, err error) {
	be := func(width int) (int, error) {
		if len(rest) < width {
			return 0, fmt.Errorf("truncated length")
		}
		switch width {
		case 1:
			return int(rest[0]), nil
		case 2:
			return int(binary.BigEndian.Uint16(rest)), nil
		default:
			return int(binary.BigEndian.Uint32(rest)), nil
		}
	}
	switch tag {
	case 0xc4, 0xd9: // bin8, str8
		n, err = be(1)
		return n, 1, err
	case 0xc5, 0xda:
		n, err = be(2)
		return n, 2, err
	case 0xc6, 0xdb:
		n, err = be(4)
		return n, 4, err
	case 0xc7: // ext8: length, type
		n, err = be(1)
		return n, 2, err
	case 0xc8:
		n, err = be(2)
		return n, 3, err
	case 0xc9:
		n, err = be(4)
		return n, 5, err
	case 0xca, 0xce, 0xd2:
		return 4, 0, nil
	case 0xcb, 0xcf, 0xd3:
		return 8, 0, nil
	case 0xcc, 0xd0:
		return 1, 0, nil
	case 0xcd, 0xd1:
		return 2, 0, nil
	case 0xd4:
		return 2, 0, nil // fixext1: type + 1
	case 0xd5:
		return 3, 0, nil
	case 0xd6:
		return 5, 0, nil
	case 0xd7:
		return 9, 0, nil
	case 0xd8:
		return 17, 0, nil
	case 0xdc, 0xde:
		n, err = be(2)
		return n, 2, err
	case 0xdd, 0xdf:
		n, err = be(4)
		return n, 4, err
	}
	return 0, 0, fmt.Errorf("invalid msgpack tag 0x%02x", tag)
}
