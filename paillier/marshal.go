package paillier

import (
	"bytes"
	"fmt"
	"math/big"

	"github.com/vmihailenco/msgpack/v5"
)

// Wire format. Every object is a msgpack array whose first element is a
// format tag string. Group elements (ciphertexts, share values, v, v_i, H)
// and secret shares are fixed-length big-endian byte strings of
// CiphertextSize() bytes; other integers are minimal big-endian byte strings
// (no leading zero byte). Decoding is strict: exact array lengths, exact
// element lengths, no trailing bytes, every group element in Z*_{n^(s+1)},
// proof components within their bit bounds, and the key id recomputed.

const (
	tagPublicKey     = "cohort/paillier/pk/v1"
	tagThresholdKey  = "cohort/paillier/tpk/v1"
	tagKeyShare      = "cohort/paillier/keyshare/v1"
	tagCiphertexts   = "cohort/paillier/ciphertexts/v1"
	tagDecryptionShr = "cohort/paillier/decshare/v1"
)

type encoder struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
	err error
}

func newEncoder(tag string, fields int) *encoder {
	e := &encoder{}
	e.enc = msgpack.NewEncoder(&e.buf)
	e.arr(fields + 1)
	e.str(tag)
	return e
}

func (e *encoder) arr(n int) {
	if e.err == nil {
		e.err = e.enc.EncodeArrayLen(n)
	}
}
func (e *encoder) str(s string) {
	if e.err == nil {
		e.err = e.enc.EncodeString(s)
	}
}
func (e *encoder) int(v int) {
	if e.err == nil {
		e.err = e.enc.EncodeInt(int64(v))
	}
}
func (e *encoder) bin(b []byte) {
	if e.err == nil {
		e.err = e.enc.EncodeBytes(b)
	}
}

// fixed encodes x as exactly size bytes.
func (e *encoder) fixed(x *big.Int, size int) {
	if x == nil || x.Sign() < 0 || (x.BitLen()+7)/8 > size {
		if e.err == nil {
			e.err = fmt.Errorf("%w: value does not fit %d bytes", ErrDecode, size)
		}
		return
	}
	e.bin(x.FillBytes(make([]byte, size)))
}

func (e *encoder) minimal(x *big.Int) {
	if x == nil || x.Sign() < 0 {
		if e.err == nil {
			e.err = fmt.Errorf("%w: negative or nil value", ErrDecode)
		}
		return
	}
	e.bin(x.Bytes())
}

func (e *encoder) bytes() ([]byte, error) {
	if e.err != nil {
		return nil, e.err
	}
	return e.buf.Bytes(), nil
}

type decoder struct {
	r   *bytes.Reader
	dec *msgpack.Decoder
	err error
}

func newDecoder(b []byte, tag string, fields int) *decoder {
	d := &decoder{r: bytes.NewReader(b)}
	d.dec = msgpack.NewDecoder(d.r)
	if n := d.arr(); d.err == nil && n != fields+1 {
		d.fail("want %d fields, have %d", fields+1, n)
	}
	if s := d.str(); d.err == nil && s != tag {
		d.fail("want tag %q", tag)
	}
	return d
}

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %s", ErrDecode, fmt.Sprintf(format, args...))
	}
}

// failErr records err (typically wrapping ErrInvalidKey) so that the
// result wraps both ErrDecode and err.
func (d *decoder) failErr(err error) {
	if d.err == nil {
		d.err = fmt.Errorf("%w: %w", ErrDecode, err)
	}
}

func (d *decoder) arr() int {
	if d.err != nil {
		return 0
	}
	n, err := d.dec.DecodeArrayLen()
	if err != nil || n < 0 {
		d.fail("array expected")
		return 0
	}
	if n > d.r.Len() { // every element takes at least one byte
		d.fail("array longer than input")
		return 0
	}
	return n
}

func (d *decoder) str() string {
	if d.err != nil {
		return ""
	}
	s, err := d.dec.DecodeString()
	if err != nil {
		d.fail("string expected")
	}
	return s
}

func (d *decoder) int(lo, hi int) int {
	if d.err != nil {
		return 0
	}
	v, err := d.dec.DecodeInt64()
	if err != nil {
		d.fail("integer expected")
		return 0
	}
	if v < int64(lo) || v > int64(hi) {
		d.fail("integer %d out of range %d..%d", v, lo, hi)
		return 0
	}
	return int(v)
}

func (d *decoder) bin(maxLen int) []byte {
	if d.err != nil {
		return nil
	}
	n, err := d.dec.DecodeBytesLen()
	if err != nil || n < 0 || n > maxLen || n > d.r.Len() {
		d.fail("byte string expected (at most %d bytes)", maxLen)
		return nil
	}
	b := make([]byte, n)
	if _, err := d.r.Read(b); err != nil && n > 0 {
		d.fail("short byte string")
		return nil
	}
	return b
}

// fixed decodes exactly size bytes.
func (d *decoder) fixed(size int) *big.Int {
	b := d.bin(size)
	if d.err == nil && len(b) != size {
		d.fail("want %d bytes, have %d", size, len(b))
	}
	return new(big.Int).SetBytes(b)
}

// minimal decodes a canonical big-endian integer of at most maxBits bits.
func (d *decoder) minimal(maxBits int) *big.Int {
	b := d.bin((maxBits + 7) / 8)
	if d.err != nil {
		return nil
	}
	if len(b) > 0 && b[0] == 0 {
		d.fail("non-canonical integer")
		return nil
	}
	x := new(big.Int).SetBytes(b)
	if x.BitLen() > maxBits {
		d.fail("integer longer than %d bits", maxBits)
	}
	return x
}

func (d *decoder) unit(m *big.Int, size int, what string) *big.Int {
	x := d.fixed(size)
	if d.err == nil && !inUnits(x, m) {
		d.fail("%s not in Z*_{n^(s+1)}", what)
	}
	return x
}

func (d *decoder) done() error {
	if d.err == nil && d.r.Len() != 0 {
		d.fail("%d trailing bytes", d.r.Len())
	}
	return d.err
}

// MarshalBinary encodes the public key (n, s, H).
func (pk *PublicKey) MarshalBinary() ([]byte, error) {
	if pk == nil {
		return nil, fmt.Errorf("%w: nil public key", ErrDecode)
	}
	e := newEncoder(tagPublicKey, 3)
	pk.encodeFields(e)
	return e.bytes()
}

func (pk *PublicKey) encodeFields(e *encoder) {
	e.minimal(pk.N)
	e.int(pk.s())
	if pk.H == nil {
		e.err = fmt.Errorf("%w: public key without fixed base", ErrDecode)
		return
	}
	e.fixed(pk.H, pk.CiphertextSize())
}

func decodePublicKeyFields(d *decoder) *PublicKey {
	n := d.minimal(MaxBits)
	s := d.int(1, MaxS)
	if d.err != nil {
		return nil
	}
	// Size policy, small factors, perfect powers, primality (checkModulus).
	pk, err := newPublicKeyNoBase(n, s)
	if err != nil {
		d.failErr(err)
		return nil
	}
	h := d.fixed(pk.CiphertextSize())
	if d.err != nil {
		return nil
	}
	// H = 1, −1, a non-unit or an element of small order would make
	// ciphertexts readable without the key (checkElement).
	if err := checkElement(h, pk.N, pk.NS1, false, "fixed base H"); err != nil {
		d.failErr(err)
		return nil
	}
	pk.H = h
	return pk
}

// UnmarshalPublicKey decodes a public key written by MarshalBinary.
func UnmarshalPublicKey(b []byte) (*PublicKey, error) {
	d := newDecoder(b, tagPublicKey, 3)
	pk := decodePublicKeyFields(d)
	if err := d.done(); err != nil {
		return nil, err
	}
	if err := canonical(b, pk.MarshalBinary); err != nil {
		return nil, err
	}
	return pk, nil
}

// canonical rejects an input that decoded but is not the one encoding we
// produce (msgpack admits several encodings of one integer, and strings
// where byte strings are expected), so that every accepted value has
// exactly one byte representation.
func canonical(b []byte, marshal func() ([]byte, error)) error {
	out, err := marshal()
	if err != nil || !bytes.Equal(out, b) {
		return fmt.Errorf("%w: non-canonical encoding", ErrDecode)
	}
	return nil
}

// MarshalBinary encodes the threshold public key.
func (pk *ThresholdPublicKey) MarshalBinary() ([]byte, error) {
	if pk == nil {
		return nil, fmt.Errorf("%w: nil public key", ErrDecode)
	}
	e := newEncoder(tagThresholdKey, 8)
	pk.PublicKey.encodeFields(e)
	size := pk.CiphertextSize()
	e.int(pk.Parties)
	e.int(pk.Threshold)
	e.fixed(pk.V, size)
	e.arr(len(pk.VerificationKeys))
	for _, vk := range pk.VerificationKeys {
		e.fixed(vk, size)
	}
	e.bin(pk.KeyID[:])
	return e.bytes()
}

func decodeThresholdFields(d *decoder) *ThresholdPublicKey {
	pub := decodePublicKeyFields(d)
	if d.err != nil {
		return nil
	}
	tpk := &ThresholdPublicKey{PublicKey: *pub}
	size := pub.CiphertextSize()
	tpk.Parties = d.int(1, MaxParties)
	tpk.Threshold = d.int(0, MaxParties-1)
	tpk.V = d.unit(pub.NS1, size, "v")
	nvk := d.arr()
	if d.err == nil && nvk != tpk.Parties {
		d.fail("want %d verification keys, have %d", tpk.Parties, nvk)
	}
	if d.err != nil {
		return nil
	}
	tpk.VerificationKeys = make([]*big.Int, nvk)
	for i := range tpk.VerificationKeys {
		tpk.VerificationKeys[i] = d.unit(pub.NS1, size, "verification key")
	}
	id := d.bin(32)
	if d.err == nil && len(id) != 32 {
		d.fail("key id must have 32 bytes")
	}
	if d.err != nil {
		return nil
	}
	copy(tpk.KeyID[:], id)
	if err := tpk.checkThreshold(); err != nil {
		d.failErr(err)
		return nil
	}
	return tpk
}

// UnmarshalThresholdPublicKey decodes and checks a threshold public key.
func UnmarshalThresholdPublicKey(b []byte) (*ThresholdPublicKey, error) {
	d := newDecoder(b, tagThresholdKey, 8)
	tpk := decodeThresholdFields(d)
	if err := d.done(); err != nil {
		return nil, err
	}
	if err := canonical(b, tpk.MarshalBinary); err != nil {
		return nil, err
	}
	return tpk, nil
}

// MarshalBinary encodes the key share together with its public key.
func (ks *KeyShare) MarshalBinary() ([]byte, error) {
	if ks == nil || ks.Public == nil {
		return nil, fmt.Errorf("%w: key share without public key", ErrDecode)
	}
	pub, err := ks.Public.MarshalBinary()
	if err != nil {
		return nil, err
	}
	e := newEncoder(tagKeyShare, 3)
	e.int(ks.Index)
	e.fixed(ks.Secret, ks.Public.CiphertextSize())
	e.bin(pub)
	return e.bytes()
}

// UnmarshalKeyShare decodes a key share and checks it against its
// verification key (one exponentiation).
func UnmarshalKeyShare(b []byte) (*KeyShare, error) {
	d := newDecoder(b, tagKeyShare, 3)
	idx := d.int(1, MaxParties)
	secret := d.bin(MaxBits * (MaxS + 1) / 8)
	pubBytes := d.bin(len(b))
	if err := d.done(); err != nil {
		return nil, err
	}
	tpk, err := UnmarshalThresholdPublicKey(pubBytes)
	if err != nil {
		return nil, err
	}
	if idx > tpk.Parties {
		return nil, fmt.Errorf("%w: share index %d > %d parties", ErrDecode, idx, tpk.Parties)
	}
	if len(secret) != tpk.CiphertextSize() {
		return nil, fmt.Errorf("%w: secret must have %d bytes", ErrDecode, tpk.CiphertextSize())
	}
	x := new(big.Int).SetBytes(secret)
	// x < n^s·n' < n^(s+1)/4.
	if x.Sign() <= 0 || x.Cmp(new(big.Int).Rsh(tpk.NS1, 2)) >= 0 {
		return nil, fmt.Errorf("%w: secret out of range", ErrDecode)
	}
	if new(big.Int).Exp(tpk.V, x, tpk.NS1).Cmp(tpk.VerificationKeys[idx-1]) != 0 {
		return nil, fmt.Errorf("%w: secret does not match verification key %d", ErrInvalidKey, idx)
	}
	ks := &KeyShare{Index: idx, Secret: x, Public: tpk}
	if err := canonical(b, ks.MarshalBinary); err != nil {
		return nil, err
	}
	return ks, nil
}

// MarshalCiphertexts encodes ciphertexts as fixed-length elements.
func (pk *PublicKey) MarshalCiphertexts(cs []*Ciphertext) ([]byte, error) {
	e := newEncoder(tagCiphertexts, 1)
	e.arr(len(cs))
	size := pk.CiphertextSize()
	for _, c := range cs {
		if c == nil {
			return nil, ErrInvalidCiphertext
		}
		e.fixed(c.C, size)
	}
	return e.bytes()
}

// UnmarshalCiphertexts decodes ciphertexts and checks that each is an
// element of Z*_{n^(s+1)}.
func (pk *PublicKey) UnmarshalCiphertexts(b []byte) ([]*Ciphertext, error) {
	d := newDecoder(b, tagCiphertexts, 1)
	size := pk.CiphertextSize()
	n := d.arr()
	if d.err == nil && n > d.r.Len()/size {
		d.fail("too many ciphertexts for the input length")
	}
	if d.err != nil {
		return nil, d.err
	}
	cs := make([]*Ciphertext, n)
	ns1 := pk.ns1()
	for i := range cs {
		cs[i] = &Ciphertext{C: d.unit(ns1, size, "ciphertext")}
	}
	if err := d.done(); err != nil {
		return nil, err
	}
	if err := canonical(b, func() ([]byte, error) { return pk.MarshalCiphertexts(cs) }); err != nil {
		return nil, err
	}
	return cs, nil
}

// MarshalBinary encodes a decryption share. Values are fixed-length
// elements of the key's ciphertext size (recorded by DecryptShare and
// UnmarshalDecryptionShare; for a hand-built share, the longest value's
// length, which equals the key's size except with negligible probability).
func (sh *DecryptionShare) MarshalBinary() ([]byte, error) {
	if sh == nil || sh.Proof == nil {
		return nil, fmt.Errorf("%w: share without proof", ErrDecode)
	}
	size := sh.elemSize
	if size == 0 {
		for _, v := range sh.Values {
			if v == nil {
				return nil, fmt.Errorf("%w: nil share value", ErrDecode)
			}
			size = max(size, (v.BitLen()+7)/8)
		}
	}
	e := newEncoder(tagDecryptionShr, 5)
	e.int(sh.Index)
	e.int(size)
	e.arr(len(sh.Values))
	for _, v := range sh.Values {
		e.fixed(v, size)
	}
	e.minimal(sh.Proof.E)
	e.minimal(sh.Proof.Z)
	return e.bytes()
}

// UnmarshalDecryptionShare decodes a decryption share and range-checks it
// (values in Z*_{n^(s+1)}, proof components within their bit bounds). It
// does not verify the proof: call VerifyShare.
func (pk *ThresholdPublicKey) UnmarshalDecryptionShare(b []byte) (*DecryptionShare, error) {
	d := newDecoder(b, tagDecryptionShr, 5)
	idx := d.int(1, pk.Parties)
	size := pk.CiphertextSize()
	d.int(size, size)
	n := d.arr()
	if d.err == nil && n > d.r.Len()/size {
		d.fail("too many values for the input length")
	}
	if d.err != nil {
		return nil, d.err
	}
	vals := make([]*big.Int, n)
	ns1 := pk.ns1()
	for i := range vals {
		vals[i] = d.unit(ns1, size, "share value")
	}
	e := d.minimal(challengeBits)
	z := d.minimal(pk.rhoBits() + 1)
	if err := d.done(); err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: share without values", ErrDecode)
	}
	sh := &DecryptionShare{Index: idx, Values: vals, Proof: &Proof{E: e, Z: z}, elemSize: size}
	if err := canonical(b, sh.MarshalBinary); err != nil {
		return nil, err
	}
	return sh, nil
}
