package secureagg

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/wire"
)

// The lattice backend's messages carry blobs of up to hundreds of
// megabytes (an aggregate of a million values is 25–58 MB, depending on
// the values' width), beyond wire.MaxMessageSize. A blob
// travels in parts of at most partSize bytes: part 0 on the step's channel,
// part i on its sub-channel "part/i", so the receiver asks for each part by
// its key and the order of arrival does not matter. A part's body is framed
// as one version byte, the length of its header (uvarint), the header
// (msgpack through wire.Marshal, decoded strictly) and the part's raw
// bytes: the bulk stays out of msgpack, which would copy it on each side.

const (
	blobVersion = 1
	// defaultPartSize is how many bytes of a blob one message carries: as
	// many as a message holds beside its envelope and the part's framing
	// (partRoom). A blob of two or more parts is copied into one buffer
	// on arrival (blobReader), and one of a single part is not, so the
	// larger the part, the fewer blobs pay that copy: a million values'
	// aggregate (25 MB at 24-bit values, 58 MB at 62-bit ones, N = 5)
	// now travels whole, where parts of 16 MiB cut it in two to four.
	defaultPartSize = wire.MaxMessageSize - partRoom
	// partRoom bounds what a message adds to a part's bytes: the
	// envelope's fields (wire.MaxFieldLen each, a few KiB in all) and the
	// part's framing (a version byte, a uvarint and a header of at most
	// maxBlobHeader).
	partRoom      = 1 << 17
	maxBlobHeader = 1 << 16
)

// blobHeader heads every part of a blob. An abort (Missing set) has no
// parts and no data: it ends the attempt naming the parties missing.
type blobHeader struct {
	Shape   string   `msgpack:"shape"`
	Missing []string `msgpack:"missing"`
	Part    int      `msgpack:"part"`
	Parts   int      `msgpack:"parts"`
	Size    int      `msgpack:"size"` // bytes of the whole blob
}

// frameRaw encodes header, then raw.
func frameRaw(header any, raw []byte) ([]byte, error) {
	p, err := framePrefix(header)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(p)+len(raw))
	return append(append(b, p...), raw...), nil
}

// framePrefix is what frameRaw puts before the raw bytes: the version, the
// header's length and the header.
func framePrefix(header any) ([]byte, error) {
	h, err := wire.Marshal(header)
	if err != nil {
		return nil, err
	}
	b := make([]byte, 0, 1+binary.MaxVarintLen64+len(h))
	b = append(b, blobVersion)
	b = binary.AppendUvarint(b, uint64(len(h)))
	return append(b, h...), nil
}

// unframeRaw decodes the header of b into header and returns the raw bytes
// that follow it (a sub-slice of b).
func unframeRaw(b []byte, header any) ([]byte, error) {
	if len(b) < 2 || b[0] != blobVersion {
		return nil, fmt.Errorf("%w: not a framed body of version %d", wire.ErrMalformed, blobVersion)
	}
	n, k := binary.Uvarint(b[1:])
	if k <= 0 || n > maxBlobHeader || n > uint64(len(b)-1-k) {
		return nil, fmt.Errorf("%w: bad header length", wire.ErrMalformed)
	}
	start := 1 + k
	if err := wire.Unmarshal(b[start:start+int(n)], header); err != nil {
		return nil, err
	}
	return b[start+int(n):], nil
}

// partCount is how many parts a blob of size bytes takes.
func partCount(size, partSize int) int {
	return max(1, (size+partSize-1)/partSize)
}

// splitBlob cuts a blob into the bodies of its parts.
func splitBlob(shape string, data []byte, partSize int) ([][]byte, error) {
	parts := partCount(len(data), partSize)
	out := make([][]byte, parts)
	for i := range out {
		chunk := data[min(i*partSize, len(data)):min((i+1)*partSize, len(data))]
		var err error
		out[i], err = frameRaw(blobHeader{Shape: shape, Part: i, Parts: parts, Size: len(data)}, chunk)
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// binaryAppender is encoding.BinaryAppender (the name encoding is this
// package's type): lattice's aggregates, masks and shares.
type binaryAppender interface {
	AppendBinary(b []byte) ([]byte, error)
}

// marshalBlob encodes m as a blob and cuts it into the bodies of its
// parts, as splitBlob of m's encoding would, but part 0 is built in place:
// m is appended after room for part 0's framing, which is then written
// just before it, so that the blob's first (often only) part is never
// copied. Later parts are copied as splitBlob copies them.
func marshalBlob(shape string, m binaryAppender, partSize int) (frames, error) {
	room, err := framePrefix(blobHeader{Shape: shape, Part: 0, Parts: math.MaxInt, Size: math.MaxInt})
	if err != nil {
		return nil, err
	}
	buf, err := m.AppendBinary(make([]byte, len(room)))
	if err != nil {
		return nil, err
	}
	data := buf[len(room):]
	parts := partCount(len(data), partSize)
	out := make(frames, parts)
	for i := range out {
		chunk := data[min(i*partSize, len(data)):min((i+1)*partSize, len(data))]
		h := blobHeader{Shape: shape, Part: i, Parts: parts, Size: len(data)}
		if i > 0 {
			if out[i], err = frameRaw(h, chunk); err != nil {
				return nil, err
			}
			continue
		}
		p, err := framePrefix(h)
		if err != nil {
			return nil, err
		}
		if len(p) > len(room) {
			return nil, fmt.Errorf("secureagg: a part's framing of %d bytes exceeds its room of %d", len(p), len(room))
		}
		start := len(room) - len(p)
		copy(buf[start:], p)
		end := len(room) + len(chunk)
		out[0] = buf[start:end:end]
	}
	return out, nil
}

// decodePart decodes one part's body. For part 0 it checks the blob's
// size against maxSize and returns the header that the other parts must
// repeat; an abort names parties among allowed and carries nothing.
func decodePart(b []byte, shape string, part, maxSize, partSize int, allowed []string) (blobHeader, []byte, error) {
	var h blobHeader
	chunk, err := unframeRaw(b, &h)
	if err != nil {
		return h, nil, err
	}
	if len(h.Missing) > 0 {
		if part != 0 || h.Parts != 0 || h.Size != 0 || len(chunk) > 0 {
			return h, nil, fmt.Errorf("%w: an abort that carries data", wire.ErrMalformed)
		}
		return h, nil, checkNames("missing", h.Missing, allowed)
	}
	if h.Shape != shape {
		return h, nil, fmt.Errorf("%w: peer aggregates %.100q, we aggregate %q (every party must use the same config and vector length)",
			wire.ErrMalformed, h.Shape, shape)
	}
	if h.Size < 0 || h.Size > maxSize || h.Parts != partCount(h.Size, partSize) || h.Part != part {
		return h, nil, fmt.Errorf("%w: part %d of %d of a blob of %d bytes (expected part %d, at most %d bytes)",
			wire.ErrMalformed, h.Part, h.Parts, h.Size, part, maxSize)
	}
	if want := min(partSize, h.Size-part*partSize); len(chunk) != want {
		return h, nil, fmt.Errorf("%w: part %d holds %d bytes, expected %d", wire.ErrMalformed, part, len(chunk), want)
	}
	return h, chunk, nil
}

// relayBlob cuts a blob this party received into the parts it passes on
// to its children, or into none (an empty, non-nil message) when it has
// no children: a leaf passes nothing on, and cutting the blob would copy
// all of it for no one (25 MB of the down message and 8 MB of the result
// per leaf in a million values' round).
func (s *latticeAgg) relayBlob(data []byte) (frames, error) {
	if len(s.tree.children(s.self)) == 0 {
		return frames{}, nil
	}
	return splitBlob(s.shape, data, s.partSize)
}

// blobAbort is an abort naming the missing parties: one part, no data.
func blobAbort(missing []string) (frames, error) {
	b, err := frameRaw(blobHeader{Missing: missing}, nil)
	if err != nil {
		return nil, err
	}
	return frames{b}, nil
}

// blobReader assembles a blob of at most maxSize bytes from its parts, or
// takes an abort naming parties among allowed.
type blobReader struct {
	shape             string
	maxSize, partSize int
	allowed           []string
	first             blobHeader
	data              []byte
}

func newBlobReader(shape string, maxSize, partSize int, allowed []string) *blobReader {
	return &blobReader{shape: shape, maxSize: maxSize, partSize: partSize, allowed: allowed}
}

func (r *blobReader) part(i int, body []byte) (int, error) {
	h, chunk, err := decodePart(body, r.shape, i, r.maxSize, r.partSize, r.allowed)
	if err != nil {
		return 0, err
	}
	if i == 0 {
		r.first = h
		if len(h.Missing) > 0 {
			return 1, nil
		}
		if h.Parts == 1 { // the whole blob: no copy (the body is this reader's alone)
			r.data = chunk[:len(chunk):len(chunk)]
			return 1, nil
		}
		r.data = make([]byte, 0, h.Size)
	} else if h.Size != r.first.Size || h.Parts != r.first.Parts {
		return 0, fmt.Errorf("%w: the parts of a blob disagree on its size", wire.ErrMalformed)
	}
	r.data = append(r.data, chunk...)
	return r.first.Parts, nil
}

func (r *blobReader) message() ([]byte, []string) { return r.data, r.first.Missing }

// encodeList concatenates byte strings, each prefixed by its length.
func encodeList(items [][]byte) []byte { return list(items).append(nil) }

// list is encodeList's input as a blob marshalBlob can build in place.
type list [][]byte

// AppendBinary appends encodeList(l) to b.
func (l list) AppendBinary(b []byte) ([]byte, error) { return l.append(b), nil }

func (l list) append(b []byte) []byte {
	n := binary.MaxVarintLen64
	for _, it := range l {
		n += binary.MaxVarintLen64 + len(it)
	}
	b = binary.AppendUvarint(slices.Grow(b, n), uint64(len(l)))
	for _, it := range l {
		b = binary.AppendUvarint(b, uint64(len(it)))
		b = append(b, it...)
	}
	return b
}

// uvarintLen is the length of v's shortest uvarint form.
func uvarintLen(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

// decodeList reverses encodeList for exactly count items (sub-slices of b).
func decodeList(b []byte, count int) ([][]byte, error) {
	n, k := binary.Uvarint(b)
	if k <= 0 || k != uvarintLen(n) || n != uint64(count) {
		return nil, fmt.Errorf("%w: a list of %d items, expected %d", wire.ErrMalformed, n, count)
	}
	b = b[k:]
	out := make([][]byte, count)
	for i := range out {
		l, k := binary.Uvarint(b)
		if k <= 0 || k != uvarintLen(l) || l > uint64(len(b)-k) { // one encoding per list: lengths in their shortest form
			return nil, fmt.Errorf("%w: list item %d overruns the body", wire.ErrMalformed, i)
		}
		out[i] = b[k : k+int(l)]
		b = b[k+int(l):]
	}
	if len(b) != 0 {
		return nil, fmt.Errorf("%w: %d bytes after the list", wire.ErrMalformed, len(b))
	}
	return out, nil
}

// latticeRequest asks a decryptor for its shares of another plan than the
// first: Seq 1 after a decryptor's share failed to arrive (a plan over the
// parties left), Seq 2 after the quorums disagreed (Blame: a plan that
// names the maker of a wrong share). Available are the parties the plan is
// built on; every decryptor builds the plan itself from them.
type latticeRequest struct {
	Seq       int      `msgpack:"seq"`
	Blame     bool     `msgpack:"blame"`
	Available []string `msgpack:"available"`
}

// maxRequests is how many plans beyond the first a decryptor serves.
const maxRequests = 2

// decodeLatticeRequest decodes a share request: a sequence number above last and
// at most maxRequests, and at least quorum available parties among parties.
func decodeLatticeRequest(b []byte, last, quorum int, parties []string) (*latticeRequest, error) {
	var r latticeRequest
	if err := wire.Unmarshal(b, &r); err != nil {
		return nil, err
	}
	if r.Seq <= last || r.Seq > maxRequests {
		return nil, fmt.Errorf("%w: request %d after request %d", wire.ErrMalformed, r.Seq, last)
	}
	if len(r.Available) < quorum {
		return nil, fmt.Errorf("%w: %d available parties, the quorum is %d", wire.ErrMalformed, len(r.Available), quorum)
	}
	if err := checkNames("available", r.Available, parties); err != nil {
		return nil, err
	}
	return &r, nil
}

// latticeResult is the root's public result, with the agreed plaintext
// (coefficients modulo T, trailing zeros cut) as the raw bytes after it.
type latticeResult struct {
	Included []string          `msgpack:"included"`
	Excluded map[string]string `msgpack:"excluded"`
	Noise    *NoiseReport      `msgpack:"noise"`
	Missing  []string          `msgpack:"missing"`
	Error    string            `msgpack:"error"`

	plain []uint64 // the plaintext, not in the header
	err   error    // the root's own error behind Error, not sent
}

// encodeResult frames a result with its plaintext.
func encodeResult(r *latticeResult) ([]byte, error) { return resultBlob{r}.AppendBinary(nil) }

// resultBlob is a result as a blob marshalBlob builds in place: the root
// writes its plaintext once, into the message, instead of into a buffer
// that is then copied into the framing and again into the parts (8 MB
// each for a million values).
type resultBlob struct{ r *latticeResult }

// AppendBinary appends encodeResult's bytes to b.
func (rb resultBlob) AppendBinary(b []byte) ([]byte, error) {
	plain := rb.r.plain
	n := len(plain)
	for n > 0 && plain[n-1] == 0 {
		n--
	}
	p, err := framePrefix(rb.r)
	if err != nil {
		return nil, err
	}
	b = append(slices.Grow(b, len(p)+8*n), p...)
	for _, c := range plain[:n] {
		b = binary.LittleEndian.AppendUint64(b, c)
	}
	return b, nil
}

// decodeLatticeResult decodes a result over parties whose plaintext has at most
// coeffs coefficients, each below modulus (padded back to coeffs).
func decodeLatticeResult(b []byte, coeffs int, modulus uint64, parties []string) (*latticeResult, error) {
	var r latticeResult
	raw, err := unframeRaw(b, &r)
	if err != nil {
		return nil, err
	}
	failed, err := checkFailure(r.Error, r.Missing, len(raw) > 0 || len(r.Included) > 0 || len(r.Excluded) > 0 || r.Noise != nil, parties)
	if err != nil {
		return nil, err
	}
	if failed {
		return &r, nil
	}
	if len(raw)%8 != 0 || len(raw) > 8*coeffs {
		return nil, fmt.Errorf("%w: a plaintext of %d bytes, at most %d coefficients", wire.ErrMalformed, len(raw), coeffs)
	}
	r.plain = make([]uint64, coeffs)
	for i := range len(raw) / 8 {
		c := binary.LittleEndian.Uint64(raw[8*i:])
		if c >= modulus {
			return nil, fmt.Errorf("%w: plaintext coefficient out of range", wire.ErrMalformed)
		}
		r.plain[i] = c
	}
	if err := checkReport(r.Included, r.Excluded, r.Noise, parties); err != nil {
		return nil, err
	}
	return &r, nil
}

// checkFailure checks a result's failure fields, on either backend: a
// short error text, missing parties of the step, and, when the result
// reports a failure (failed), no sum or report beside it (carriesSum).
func checkFailure(errText string, missing []string, carriesSum bool, parties []string) (failed bool, err error) {
	if len(errText) > maxReason {
		return false, fmt.Errorf("%w: error text of %d bytes", wire.ErrMalformed, len(errText))
	}
	if err := checkNames("missing", missing, parties); err != nil {
		return false, err
	}
	failed = errText != "" || len(missing) > 0
	if failed && carriesSum {
		return false, fmt.Errorf("%w: a failed result carries a sum", wire.ErrMalformed)
	}
	return failed, nil
}

// checkReport checks a result's public fields, on either backend: who is
// in the sum and who was excluded (parties of the step, short reasons),
// and the noise report.
func checkReport(included []string, excluded map[string]string, noise *NoiseReport, parties []string) error {
	if err := checkNames("included", included, parties); err != nil {
		return err
	}
	if err := checkExcluded(excluded, parties); err != nil {
		return err
	}
	return checkNoise(noise, len(parties))
}

// checkExcluded checks a result's exclusions: parties of the step, short
// reasons.
func checkExcluded(excluded map[string]string, parties []string) error {
	for p, why := range excluded {
		if !slices.Contains(parties, p) {
			return fmt.Errorf("%w: excluded names %q, not a party", wire.ErrMalformed, p)
		}
		if len(why) > maxReason {
			return fmt.Errorf("%w: exclusion reason of %d bytes", wire.ErrMalformed, len(why))
		}
	}
	return nil
}

// checkNoise checks a result's noise report for a step of n parties.
func checkNoise(nr *NoiseReport, n int) error {
	if nr == nil {
		return nil
	}
	for _, v := range []float64{nr.Epsilon, nr.Delta, nr.Sensitivity, nr.Scale} {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("%w: noise report holds %v", wire.ErrMalformed, v)
		}
	}
	if (nr.Mechanism != Laplace && nr.Mechanism != Gaussian) || nr.Shares != n || nr.Colluders < 0 || nr.Colluders >= nr.Shares {
		return fmt.Errorf("%w: bad noise report", wire.ErrMalformed)
	}
	return nil
}
