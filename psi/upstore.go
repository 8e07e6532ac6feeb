package psi

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/cloudflare/circl/group"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// Store is where a party keeps what the unbalanced mode keeps between
// exchanges, in its data dir through job.Secrets (files of mode 0600,
// replaced atomically): as a server, the long-term key of one dataset's
// join columns and what was computed from it; as a client, the filters it
// fetched. Nothing of it is ever sent, logged or committed except the
// filter, which is what the server sends its clients anyway.
type Store struct {
	// Secrets are the party's data dir (job.Participant.Secrets).
	Secrets job.Secrets
	// Scope names the dataset and join columns this party's set comes
	// from (as a server): one key per scope, rotated whenever the set of
	// the scope changes. It is hashed into a file name and never leaves
	// the node, so it may hold a path.
	Scope string
}

// TableStore is the Store of the join values a party reads from its own
// table name (its test table when test) on the columns cols, for the
// job's purpose (its PSI channel prefix: training, test or prediction
// rows). Its scope names the job's kind, the purpose, the data the table
// resolves to on this node (job.DatasetIdentity) and the columns, never
// the name a spec gives the table: the same data under another name keeps
// its key, and costs no second offline phase.
func TableStore(p job.Participant, name string, test bool, purpose string, cols []string) (*Store, error) {
	ts, ok := job.TableSpec{}, false
	if test {
		ts, ok = p.Spec().TestTable(name), true
	} else if ps, found := p.Spec().Party(p.Self()); found {
		for _, own := range ps.Tables {
			if own.Name == name {
				ts, ok = own, true
			}
		}
	}
	if !ok {
		return nil, fmt.Errorf("%w: table %s is not party %s's", ErrConfig, name, p.Self())
	}
	src, err := p.TableSource(ts)
	if err != nil {
		return nil, fmt.Errorf("table %s: %w", name, err)
	}
	scope := append([]string{p.Spec().Kind, purpose, job.DatasetIdentity(src)}, cols...)
	return &Store{Secrets: p.Secrets(), Scope: strings.Join(scope, "\x00")}, nil
}

// Files of a Store, under the data dir.
const (
	upServerDir = "psi/unbalanced"
	upCacheDir  = "psi/unbalanced-cache"
)

// upIDLen is the length of a filter's id and epoch: random, so they say
// nothing about the set or the scope.
const upIDLen = 16

// upKey is the server's long-term state of one scope, in its key file:
// the key and what it was used on. The key is fresh for every epoch: a
// set that changes gets a new key, so a client cannot compare two
// epochs' filters element by element (under one key it could tell which
// fingerprints were added and removed).
type upKey struct {
	ID     []byte `msgpack:"id"` // the scope's filter id, kept across epochs
	Epoch  []byte `msgpack:"epoch"`
	K      []byte `msgpack:"k"`      // the secret scalar
	Digest []byte `msgpack:"digest"` // setDigest of the elems it was built from
	Count  int    `msgpack:"count"`  // len(elems)
	N      int    `msgpack:"n"`      // distinct elements
	FN     int    `msgpack:"fn"`     // distinct fingerprints (the filter's)
	H      uint   `msgpack:"h"`
}

// upServer is a server's prepared state for one set.
type upServer struct {
	key upKey
	k   *Secret
	enc []uint64 // fingerprint of elems[i], for each position i
}

func (st *Store) dir() string {
	d := sha256.Sum256([]byte("cohort-psi-upsi-v1:scope\x00" + st.Scope))
	return upServerDir + "/" + hex.EncodeToString(d[:16])
}

// setDigest hashes elems in order, length-prefixed, so the server knows
// whether its prepared state is still the set's. It is SHA-256 over the
// bytes (hardware-accelerated where the CPU has it), about 0.1 s per
// 2^24 short keys.
func setDigest(elems [][]byte) []byte {
	h := sha256.New()
	buf := make([]byte, 0, 1<<16)
	buf = append(buf, "cohort-psi-upsi-v1:set"...)
	for _, e := range elems {
		if len(buf)+binary.MaxVarintLen64+len(e) > cap(buf) {
			h.Write(buf)
			buf = buf[:0]
		}
		buf = binary.AppendUvarint(buf, uint64(len(e)))
		if len(e) > cap(buf) {
			h.Write(buf)
			h.Write(e)
			buf = buf[:0]
			continue
		}
		buf = append(buf, e...)
	}
	h.Write(buf)
	return h.Sum(nil)
}

// upTag is the hash-to-group tag of one epoch of one scope's filter. It
// is not bound to the job (the server's encodings serve every job until
// the set changes) but to the filter's random id and epoch, so values of
// another epoch or scope never meet.
func upTag(id, epoch []byte) []byte {
	d := sha256.Sum256(append(append([]byte("cohort-psi-upsi-v1:tag\x00"), id...), epoch...))
	return []byte("cohort-psi-upsi-v1:" + suite + ":" + hex.EncodeToString(d[:]))
}

// loadServer returns the prepared state of elems if the store holds it
// (the key's digest is elems'), else nil. The key and the encodings are
// parsed once per node for as long as the files are unchanged
// (Secrets.Parsed).
func (st *Store) loadServer(elems [][]byte) (*upServer, error) {
	// Parsed reads and hashes only the small key file; the encodings are
	// read when it changes. The key names a random epoch and is written
	// last, so a new key file is a new parse, and the encodings in memory
	// are always the ones its epoch tag matched.
	v, err := st.Secrets.Parsed([]string{st.dir() + "/key"}, st.parseServer)
	if err != nil {
		// None yet, or files of two epochs (two exchanges prepared the
		// same scope at once, or sendUpFilter found the filter of another
		// epoch and voided the key): prepare builds a new epoch, and
		// fails itself if the data dir cannot be written.
		return nil, nil
	}
	s := v.(*upServer)
	if s.key.Count != len(elems) || string(s.key.Digest) != string(setDigest(elems)) {
		return nil, nil // the set changed: a new epoch
	}
	return s, nil
}

// parseServer parses a key file and reads its encodings, which must be
// of the same epoch.
func (st *Store) parseServer(c [][]byte) (any, error) {
	var key upKey
	if err := wire.Unmarshal(c[0], &key); err != nil {
		return nil, fmt.Errorf("psi: unbalanced key file: %w", err)
	}
	sc := group.Ristretto255.NewScalar()
	if err := sc.UnmarshalBinary(key.K); err != nil || sc.IsZero() {
		return nil, fmt.Errorf("psi: unbalanced key file: the key is not a scalar")
	}
	enc, err := st.Secrets.ReadSecret(st.dir() + "/enc")
	if err != nil {
		return nil, fmt.Errorf("psi: read the unbalanced encodings: %w", err)
	}
	if len(enc) != upIDLen+8*key.Count || string(enc[:upIDLen]) != string(key.Epoch) {
		return nil, fmt.Errorf("psi: unbalanced encodings are not the key's epoch")
	}
	s := &upServer{key: key, k: &Secret{k: sc}, enc: make([]uint64, key.Count)}
	for i := range s.enc {
		s.enc[i] = binary.BigEndian.Uint64(enc[upIDLen+8*i:])
	}
	return s, nil
}

// prepare is the offline phase (KLSAP17's precomputation): it returns the
// state of elems, computing it under a fresh key and epoch if the store
// holds none for this set. It computes H(y)^k for every distinct y on
// every core, then writes the filter, the encodings and last the key
// file, so a crash leaves either the old epoch's files or files the key
// does not name (parseServer refuses encodings of another epoch).
func (st *Store) prepare(elems [][]byte) (*upServer, error) {
	if s, err := st.loadServer(elems); err != nil || s != nil {
		return s, err
	}
	key := upKey{Epoch: newID(), Digest: setDigest(elems), Count: len(elems)}
	if old, err := st.Secrets.ReadSecret(st.dir() + "/key"); err == nil {
		var k upKey
		if wire.Unmarshal(old, &k) == nil && len(k.ID) == upIDLen {
			key.ID = k.ID
		}
	}
	if key.ID == nil {
		key.ID = newID()
	}
	uniq, of := distinct(elems)
	key.N = len(uniq)
	if key.N > UnbalancedMaxServer {
		return nil, fmt.Errorf("%w: %d distinct elements, the unbalanced mode's limit is %d", ErrTooLarge, key.N, UnbalancedMaxServer)
	}
	key.H = highBits(key.N)
	s := &upServer{k: NewSecret(), enc: make([]uint64, len(elems))}
	kb, err := s.k.k.MarshalBinary()
	if err != nil {
		return nil, fmt.Errorf("psi: encode the unbalanced key: %w", err)
	}
	key.K = kb
	fps := oprfFingerprints(uniq, upTag(key.ID, key.Epoch), s.k, key.H)
	for i, u := range of {
		s.enc[i] = fps[u]
	}
	filter, fn := buildFilter(fps, key.H)
	key.FN = fn
	s.key = key
	if err := st.Secrets.WriteSecret(st.dir()+"/filter", append(append([]byte{}, key.Epoch...), filter...)); err != nil {
		return nil, fmt.Errorf("psi: keep the unbalanced filter: %w", err)
	}
	enc := make([]byte, upIDLen, upIDLen+8*len(s.enc))
	copy(enc, key.Epoch)
	for _, v := range s.enc {
		enc = binary.BigEndian.AppendUint64(enc, v)
	}
	if err := st.Secrets.WriteSecret(st.dir()+"/enc", enc); err != nil {
		return nil, fmt.Errorf("psi: keep the unbalanced encodings: %w", err)
	}
	kf, err := wire.Marshal(&key)
	if err != nil {
		return nil, fmt.Errorf("psi: encode the unbalanced key: %w", err)
	}
	if err := st.Secrets.WriteSecret(st.dir()+"/key", kf); err != nil {
		return nil, fmt.Errorf("psi: keep the unbalanced key: %w", err)
	}
	return s, nil
}

// oprfFingerprints returns the fingerprint under h of H(y)^k for each y
// in elems, on every core.
func oprfFingerprints(elems [][]byte, tag []byte, k *Secret, h uint) []uint64 {
	out := make([]uint64, len(elems))
	_ = parallel(len(elems), func(lo, hi int) error {
		g := group.Ristretto255
		y := g.NewElement()
		var p Point
		for i := lo; i < hi; i++ {
			y.Mul(g.HashToElement(elems[i], tag), k.k)
			encode(&p, y)
			out[i] = fingerprint(&p, h)
		}
		return nil
	})
	return out
}

// filterBytes reads the filter of s's epoch.
func (st *Store) filterBytes(s *upServer) ([]byte, error) {
	b, err := st.Secrets.ReadSecret(st.dir() + "/filter")
	if err != nil {
		return nil, fmt.Errorf("psi: read the unbalanced filter: %w", err)
	}
	if len(b) != upIDLen+filterLen(s.key.FN, s.key.H) || string(b[:upIDLen]) != string(s.key.Epoch) {
		// Two exchanges prepared this scope at once and their files
		// mixed. Void the key, so the next exchange prepares again.
		if err := st.Secrets.WriteSecret(st.dir()+"/key", nil); err != nil {
			return nil, fmt.Errorf("psi: void the unbalanced key: %w", err)
		}
		return nil, fmt.Errorf("psi: the unbalanced filter is not the key's epoch; the next exchange prepares a new one")
	}
	return b[upIDLen:], nil
}

// upCache is the meta file of a client's cached filter of one server
// scope; the filter is in a file beside it.
type upCache struct {
	Epoch  []byte `msgpack:"epoch"`
	N      int    `msgpack:"n"`
	FN     int    `msgpack:"fn"`
	H      uint   `msgpack:"h"`
	Digest []byte `msgpack:"digest"` // SHA-256 of the filter file
}

// cacheDir names the cache of peer's filter id: "meta" and "filter".
func cacheDir(peer string, id []byte) string {
	d := sha256.Sum256([]byte("cohort-psi-upsi-v1:peer\x00" + peer))
	return upCacheDir + "/" + hex.EncodeToString(d[:16]) + "/" + hex.EncodeToString(id)
}

// cachedFilter returns the client's filter of the offer's id and epoch,
// or nil if it has none (or an unreadable one: it fetches the filter
// again and replaces it). Parsed reads only the small meta file on each
// exchange; the filter is read, checked against the meta's digest and
// decoded when the meta changes.
func (st *Store) cachedFilter(peer string, o *upOffer) *upFilter {
	dir := cacheDir(peer, o.ID)
	v, err := st.Secrets.Parsed([]string{dir + "/meta"}, func(c [][]byte) (any, error) {
		var uc upCache
		if err := wire.Unmarshal(c[0], &uc); err != nil {
			return nil, err
		}
		b, err := st.Secrets.ReadSecret(dir + "/filter")
		if err != nil {
			return nil, err
		}
		if d := sha256.Sum256(b); string(d[:]) != string(uc.Digest) {
			return nil, fmt.Errorf("psi: the cached filter is not its meta's")
		}
		f, err := decodeUpFilter(b, uc.FN, uc.H)
		if err != nil {
			return nil, err
		}
		return &cachedUp{uc: uc, f: f}, nil
	})
	if err != nil {
		return nil
	}
	c := v.(*cachedUp)
	if string(c.uc.Epoch) != string(o.Epoch) || c.uc.N != o.N || c.uc.FN != o.FN || c.uc.H != o.H {
		return nil // stale: the server's set changed since
	}
	return c.f
}

type cachedUp struct {
	uc upCache
	f  *upFilter
}

// keepFilter caches a fetched filter: the filter, then its meta.
func (st *Store) keepFilter(peer string, o *upOffer, filter []byte) error {
	dir := cacheDir(peer, o.ID)
	d := sha256.Sum256(filter)
	b, err := wire.Marshal(&upCache{Epoch: o.Epoch, N: o.N, FN: o.FN, H: o.H, Digest: d[:]})
	if err != nil {
		return fmt.Errorf("psi: encode the filter cache: %w", err)
	}
	if err := st.Secrets.WriteSecret(dir+"/filter", filter); err != nil {
		return fmt.Errorf("psi: keep the filter: %w", err)
	}
	if err := st.Secrets.WriteSecret(dir+"/meta", b); err != nil {
		return fmt.Errorf("psi: keep the filter: %w", err)
	}
	return nil
}

func newID() []byte {
	b := make([]byte, upIDLen)
	rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return b
}
