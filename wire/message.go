// Package protocol defines Cohort's wire messages: a msgpack envelope that names
// the job, phase, round and attempt it belongs to, versioned libp2p protocol ids,
// and length-prefixed framing with a hard size limit.
//
// Everything here decodes bytes from other organisations, so every decoder
// returns an error on malformed input and never panics; fuzz tests check that.
package wire

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// Protocol ids, one per message family, versioned so that a node can refuse
// a family it does not speak rather than misread it.
const (
	// JobProtocol carries messages between the parties of a job.
	JobProtocol = "/cohort/job/1"
	// ControlProtocol carries requests to the coordinator (job submission
	// forwarded by a follower, status queries).
	ControlProtocol = "/cohort/control/1"
	// RaftProtocol carries hashicorp/raft's own RPCs.
	RaftProtocol = "/cohort/raft/1"
)

// MaxMessageSize bounds one framed message. It is large enough for the
// encrypted vectors of secure aggregation (10,000 packed values are well under
// 1 MiB of ciphertext) and small enough that a peer cannot make us allocate
// without bound.
const MaxMessageSize = 64 << 20

// Version is the envelope version written into every message.
const Version = 1

// Message is the envelope of every job message. Body is the job-specific
// payload, itself msgpack, decoded by the job package that owns Type.
type Message struct {
	Version int    `msgpack:"v"`
	Type    string `msgpack:"t"` // e.g. "secureagg/up", "sum/local"
	Job     string `msgpack:"j"` // job id
	Phase   string `msgpack:"p"` // phase within the job
	Round   int    `msgpack:"r"` // round within the phase
	Attempt int    `msgpack:"a"` // bumped when a new coordinator restarts a step
	// Channel separates sub-protocols of one step (several aggregations
	// in one round), so their messages never answer each other.
	Channel string `msgpack:"c,omitempty"`
	From    string `msgpack:"f"` // sender's party name; checked against the authenticated peer
	Body    []byte `msgpack:"b"` // job payload
}

// MaxFieldLen bounds every string field of the envelope: ids and names are
// short, and a peer must not make a receiver keep megabytes of job id.
const MaxFieldLen = 256

// Key identifies which receive a message answers: everything but the sender and body.
type Key struct {
	Type    string
	Job     string
	Phase   string
	Round   int
	Attempt int
	Channel string
}

// Key returns the message's matching key.
func (m *Message) Key() Key {
	return Key{Type: m.Type, Job: m.Job, Phase: m.Phase, Round: m.Round, Attempt: m.Attempt, Channel: m.Channel}
}

// String names the message for logs.
func (m *Message) String() string {
	ch := ""
	if m.Channel != "" {
		ch = " channel=" + m.Channel
	}
	return fmt.Sprintf("%s job=%s phase=%s round=%d attempt=%d%s from=%s (%d bytes)",
		m.Type, m.Job, m.Phase, m.Round, m.Attempt, ch, m.From, len(m.Body))
}

// Errors returned by Decode.
var (
	ErrTooLarge   = errors.New("wire: message exceeds size limit")
	ErrMalformed  = errors.New("wire: malformed message")
	ErrBadVersion = errors.New("wire: unsupported message version")
)

// Encode serialises m with msgpack. It checks what Decode will require, so
// a bad message fails at the sender rather than at the peer.
func Encode(m *Message) ([]byte, error) {
	e, err := EncodeParts(m)
	if err != nil {
		return nil, err
	}
	return e.Bytes(), nil
}

// Decode parses and validates one message. Any problem is an error, never
// a panic. The message shares no memory with b (DecodeOwned does).
func Decode(b []byte) (*Message, error) {
	if len(b) > MaxMessageSize {
		return nil, fmt.Errorf("%w: %d bytes", ErrTooLarge, len(b))
	}
	var m Message
	if err := Unmarshal(b, &m); err != nil {
		return nil, err
	}
	if err := m.validate(); err != nil {
		return nil, err
	}
	return &m, nil
}

// validate checks a decoded envelope: the version, the fields a message
// cannot do without, and the bounds of its strings.
func (m *Message) validate() error {
	if m.Version != Version {
		return fmt.Errorf("%w: %d", ErrBadVersion, m.Version)
	}
	if m.Type == "" || m.Job == "" {
		return fmt.Errorf("%w: missing type or job", ErrMalformed)
	}
	if m.Round < 0 || m.Attempt < 0 {
		return fmt.Errorf("%w: negative round or attempt", ErrMalformed)
	}
	return m.checkFields()
}

// checkFields bounds the envelope's strings (MaxFieldLen).
func (m *Message) checkFields() error {
	for _, f := range []struct{ name, v string }{{"type", m.Type}, {"job", m.Job}, {"phase", m.Phase}, {"channel", m.Channel}, {"from", m.From}} {
		if len(f.v) > MaxFieldLen {
			return fmt.Errorf("%w: %s field is %d bytes, limit %d", ErrMalformed, f.name, len(f.v), MaxFieldLen)
		}
	}
	return nil
}

// Marshal encodes a payload with msgpack. Job packages use it for bodies so
// that the whole system speaks one encoding.
func Marshal(v any) ([]byte, error) {
	b, err := msgpack.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("wire: marshal: %w", err)
	}
	return b, nil
}

// MarshalSized is Marshal into a buffer of size bytes to start with, for
// a payload whose encoded length its maker knows about (parts of tens of
// megabytes): Marshal's buffer starts small and doubles, copying and
// clearing the payload about twice over on the way. The bytes are
// Marshal's; a size of 0 or less is Marshal.
func MarshalSized(v any, size int) ([]byte, error) {
	if size <= 0 {
		return Marshal(v)
	}
	var buf bytes.Buffer
	buf.Grow(size)
	if err := msgpack.NewEncoder(&buf).Encode(v); err != nil {
		return nil, fmt.Errorf("wire: marshal: %w", err)
	}
	return buf.Bytes(), nil
}

// Unmarshal decodes a msgpack payload strictly: trailing bytes and unknown
// fields are errors, input whose claimed sizes or nesting could exhaust
// memory or stack is refused before decoding (see checkStructure), and
// decoder panics on hostile input are turned into errors.
func Unmarshal(b []byte, v any) error {
	return unmarshalFrom(b, &frameReader{Reader: bytes.NewReader(b), frame: b}, v)
}

// unmarshalFrom is Unmarshal reading b through r, a reader of b at its
// start (an owned bin cuts itself out of b at r's position: owned.go).
func unmarshalFrom(b []byte, r *frameReader, v any) (err error) {
	if err := checkStructure(b); err != nil {
		return err
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %v", ErrMalformed, r)
		}
	}()
	dec := msgpack.NewDecoder(r)
	dec.DisallowUnknownFields(true)
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	if r.Len() != 0 {
		return fmt.Errorf("%w: %d trailing bytes", ErrMalformed, r.Len())
	}
	return nil
}

// Disclosure names what a message reveals to its recipient. The audit ledger
// records one per message so an organisation can check what left its premises.
type Disclosure string

// Disclosure kinds.
const (
	DiscloseCiphertext      Disclosure = "ciphertext"
	DiscloseDecryptionShare Disclosure = "decryption-share"
	DiscloseClassSummary    Disclosure = "class-summary"
	DiscloseSplitSummary    Disclosure = "split-summary"
	DiscloseScore           Disclosure = "score"
	DisclosePSIBlinded      Disclosure = "psi-blinded"
	DisclosePublicResult    Disclosure = "public-result"
	// DiscloseAggregate is a party's own local aggregate in clear (the sum
	// job before secure aggregation): the recipient learns it.
	DiscloseAggregate Disclosure = "local-aggregate"
	// DiscloseControl is runtime plumbing that carries no data of the party.
	DiscloseControl Disclosure = "control"
	// DiscloseSplitAttribute is a column that may split a tree node: the
	// public skeleton names the party and table that split, the predicate
	// stays with its owner. On boost's lattice path the log also tells
	// every member how many bins the party's widest such column has (the
	// layouts of its bin sums).
	DiscloseSplitAttribute Disclosure = "split-attribute"
	// DiscloseGeneralised is a k-anonymous publication: values generalised
	// so that every group of quasi-identifiers has at least k rows.
	DiscloseGeneralised Disclosure = "generalised"
	// DiscloseMembership is a result that names which of the party's rows
	// belong to a group (a bicluster's rows), without their values.
	DiscloseMembership Disclosure = "membership"
	// DiscloseSynthetic is a synthetic sample: rows drawn from a model of
	// the party's rows (kde's kernel density estimate), none of them a row
	// as it is; each class's row count is kept.
	DiscloseSynthetic Disclosure = "synthetic"
	// DiscloseSanitisedLog is a query log published sanitised (Poblete,
	// Spiliopoulou and Baeza-Yates): URLs replaced by per-site-suffixed
	// ids, ranks hidden, navigational queries and queries with fewer than
	// k results removed, no two queries sharing a clicked site.
	DiscloseSanitisedLog Disclosure = "sanitised-log"
	// DiscloseAnonymisedGraph is a graph published anonymised (Zheleva and
	// Getoor): nodes under pseudonyms in classes of at least k with their
	// quasi-identifiers generalised, the sensitive edge type removed, the
	// other edges released by one of five strategies.
	DiscloseAnonymisedGraph Disclosure = "anonymised-graph"
	// DiscloseDistance is a column compared id by id with one other
	// party's under the key holder's ElGamal key (Yang, Zhong and Wright's
	// private Hamming distance): the other party sees only ciphertexts, the
	// key holder only how many ids differ.
	DiscloseDistance Disclosure = "distance"
	// DiscloseSecretShare is one party's Shamir share of a value inside a
	// multiparty computation (package mpc: the exponential mechanism's
	// comparisons): fewer than half of the parties' shares reveal nothing
	// of the value, and only the computation's output is opened.
	DiscloseSecretShare Disclosure = "secret-share"
	// DiscloseRaw is values published as they are.
	DiscloseRaw Disclosure = "raw"
)

// Disclosures lists every disclosure kind, the vocabulary of the audit
// ledger and of a node's policy.
func Disclosures() []Disclosure {
	return []Disclosure{DisclosePSIBlinded, DiscloseCiphertext, DiscloseDecryptionShare, DiscloseClassSummary,
		DiscloseSplitSummary, DiscloseScore, DiscloseSplitAttribute, DiscloseGeneralised, DiscloseMembership,
		DisclosePublicResult, DiscloseAggregate, DiscloseRaw, DiscloseControl, DiscloseSynthetic, DiscloseSanitisedLog,
		DiscloseAnonymisedGraph, DiscloseDistance, DiscloseSecretShare}
}
