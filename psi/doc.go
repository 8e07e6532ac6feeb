// Package psi computes private set intersections of join values (sjc: one
// per join edge) and record ids (integrate: aligning n parties), by
// commutative blinding on the prime-order group ristretto255 (RFC 9496)
// with cloudflare/circl: the Diffie–Hellman PSI of Agrawal, Evfimievski
// and Srikant, "Information sharing across private databases" (SIGMOD
// 2003, §3.2, with x^e mod p replaced by an elliptic-curve group), as
// research/seed-004-xu-thesis.md §2.11 and step 4 of its build plan ask.
//
// # Join keys
//
// Each party turns a row's join attributes into one byte string with
// EncodeKey (TableKeys does it for a table's columns). Values are typed:
// Text compares the exact bytes as written (package table has already
// trimmed surrounding space; no Unicode normalisation, no case folding),
// Number compares exact decimals, so "1.50", "1.5", "+1.5" and "15e-1" are
// one value, "007" is 7 and "-0" is 0. Numbers are parsed as decimals,
// never through float64, so two different decimals never meet by rounding
// (FloatValue turns a float64 into its shortest round-tripping decimal).
// The text "1" and the number 1 differ. A key is the version byte 1, the
// number of values, then each value as a type byte, a 4-byte big-endian
// length and its canonical text: every field is typed and length-prefixed,
// so equal keys encode alike and different keys never do (DecodeKey
// inverts it and refuses any non-canonical bytes). Both parties of an edge
// must read their columns with the same types, in the same order.
//
// # Protocol (ECDH)
//
// Both parties call ECDH.Intersect with the same step and Config, naming
// each other. Each removes repeats from its elements (a value given many
// times counts once and yields all its positions), draws a fresh secret
// scalar k (uniform, non-zero, from crypto/rand; never reused), and:
//
//  1. Blinded (psi/blinded, disclosure psi-blinded). It computes H(x)^k for
//     each distinct x, H being RFC 9380 hash_to_curve with the suite
//     ristretto255_XMD:SHA-512_R255MAP_RO_ under a domain tag that binds
//     the job, phase, round, channel and Config.Edge (DomainTag), shuffles
//     them with a fresh random permutation and sends them in chunks of
//     Config.ChunkSize, each carrying the set's size and its index.
//  2. Double (psi/double, psi-blinded). As each chunk of the peer's set
//     arrives it is decoded strictly (canonical, non-identity points; the
//     announced size within Config.MaxElements and the same in every
//     chunk; chunks in order and of the exact length; no element twice),
//     raised to k, and sent back in the order received.
//
// Each party then holds its own elements as H(x)^(k_A·k_B), in the order
// it sent them, and the peer's as H(y)^(k_B·k_A) in the peer's shuffled
// order; equal elements have equal encodings, so Match compares bytes and
// the party maps its matches back through its permutation. Each party
// does one hash and one variable-base scalar multiplication per own
// element and one multiplication per peer element (two per element for
// equal set sizes), spread over every core; the pure steps
// (HashBlind, DoubleBlind, Match) are separate from the rounds and tested
// alone. Messages carry the step's job, phase, round, attempt and channel,
// so messages of other steps or edges never answer these; run several
// PSIs in one step on sub-channels (job.Step.Sub).
//
// A party that restarts mid-exchange runs the same step again with a new
// secret, and its peer's messages to the old run still wait for it. Mixed,
// the two secrets give a silently wrong (usually empty) intersection, so
// every run draws a random run id: each chunk carries its sender's, double
// chunks and filters also the id of the set they answer, and a message of
// another run fails the exchange on both sides with ErrRestarted. The
// step then fails for the party and the coordinator runs it again whole.
//
// # Several parties (Align)
//
// For issue 13's record-id alignment, Align intersects n sets as a star
// around a hub that the caller chooses (the coordinator, say): each other
// party (spoke) runs the exchange above with the hub on the sub-channel
// "psi-align/<spoke>", except that the hub does not return the spoke's
// double-blinded set, so the spoke learns nothing from it but the hub's
// set size. The hub matches each spoke's set against its own, intersects
// the results, and sends each spoke a filter (psi/filter, psi-blinded):
// one bit per element the spoke sent, set when that element is in every
// party's set. A star costs the hub n−1 exchanges (a fresh secret each)
// and every spoke one; a chain would leak partial intersections to more
// parties, and all pairs would cost n(n−1)/2 exchanges.
//
// # Leakage profile
//
// Semi-honest parties, hash-to-group modelled as a random oracle, and the
// decisional Diffie–Hellman assumption in ristretto255:
//
//   - ECDH.Intersect: each party learns the intersection (which of its own
//     values the peer holds, Result.Indices and Size) and the number of
//     distinct values the peer put in (Result.PeerSize), and nothing about
//     the peer's other values: they reach it only as H(y)^(k_B) and
//     H(y)^(k_A·k_B), pseudorandom without k_B. The order of what is sent
//     is a fresh uniform shuffle, so it says nothing about table order.
//     How many rows share a value is not revealed (repeats are removed
//     before blinding). TestLeakage checks every message.
//   - Align: every party learns which of its own values are in every
//     party's set (and so its size) and the hub's set size. The hub also
//     learns, for each spoke, the spoke's set size and which of the hub's
//     values that spoke holds (the pairwise intersections, which can be
//     larger than the common one); spokes learn no pairwise intersection.
//     Pick a hub the consortium accepts learning that.
//   - Everyone observing the network learns message sizes and counts,
//     hence set sizes, and timing.
//
// Nothing in the Raft log: the result is each party's own, and a job
// should commit only what it may publish (for sjc, nothing: the edge's
// shared values stay with its two endpoints).
//
// # Security model and what is not checked
//
// Semi-honest, as the rest of Cohort (DESIGN.md). A malicious party can
// put in values it does not hold and so test whether the peer holds them
// (inherent to PSI: the set is its input); can return wrong doubles, which
// make the honest party's intersection wrong (there is no proof that the
// same k was used for every element, as a Chaum–Pedersen proof per element
// would give); and can give the peer a result it did not learn itself.
// Malformed messages are errors (ErrPeer, ErrTooLarge), never panics or
// unbounded allocations: a peer's set is refused beyond
// Config.MaxElements before it is read. A received double-blinded value is
// only compared, never decoded, so a bad one merely fails to match.
//
// # Not constant time
//
// Scalar multiplication with the secret k is constant time in circl's
// backend (go-ristretto's windowed ScalarMult with conditional moves).
// Hashing to the group takes time that depends on the length of the
// element; removing repeats, matching and the canonical-encoding checks
// use maps and branches on element bytes and blinded points. All of these
// run on the party's own machine and reveal, at most, timing that depends
// on its own set; set sizes are disclosed anyway.
//
// # Fast mode
//
// Intersector is the interface a faster protocol would sit behind (an
// OT-extension PSI, KKRT or RR22, 30–100× less CPU than ECDH), with the
// receiver telling the sender the intersection. None is wired: the one
// suggested, github.com/optable/match (KKRT in pkg/kkrtpsi, Apache-2.0),
// cannot be fetched here. `go list -m -versions github.com/optable/match`
// answers "403 Forbidden: This module version is not available" from the
// module proxy (so does github.com/Optable/match), and direct fetching
// from GitHub is not possible from this network; copying its source into
// the tree is not an option (no code copied from other projects). From a
// read-only snapshot of its repository: its protocols speak over one
// io.ReadWriter byte stream, not typed messages, so it would need a stream
// adapter over job.Party whose traffic our strict decoders could not
// check; its sender sizes its OPRF work from an int64 set size the
// receiver sends, unbounded; the KKRT code last changed in January 2022,
// and the README says it was tested on x86-64 only. See docs/psi.md.
package psi
