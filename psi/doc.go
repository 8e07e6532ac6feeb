// Package psi computes private set intersections of join values (sjc: one
// per join edge) and record ids (integrate: aligning n parties) in three
// modes. ECDH (the default) is commutative blinding on the prime-order
// group ristretto255 (RFC 9496) with cloudflare/circl: the Diffie–Hellman
// PSI of Agrawal, Evfimievski and Srikant, "Information sharing across
// private databases" (SIGMOD 2003, §3.2, with x^e mod p replaced by an
// elliptic-curve group), the secure intersection that Xu's secure join
// classification uses for join values (Yabo Xu, "New models and
// techniques on privacy-preserving information sharing", PhD thesis,
// Simon Fraser University, 2008, ch. 3). OT (the fast mode,
// Config.Mode = ModeOT) is the OT-extension PSI of Kolesnikov, Kumaresan,
// Rosulek and Trieu, "Efficient batched oblivious PRF with applications to
// private set intersection" (CCS 2016, "KKRT16"), semi-honest, about 100×
// less CPU than ECDH for more bytes on the wire (section "Fast mode
// (OT)"). VOLE (ModeVOLE) is the VOLE-based PSI of Rindal and
// Raghuraman, "Blazing Fast PSI from Improved OKVS and Subfield VOLE"
// (EUROCRYPT 2022, "RR22"), semi-honest, with the OT mode's roles and
// leakage and about a third of its bytes (section "VOLE mode").
// Unbalanced (ModeUnbalanced) serves a large set against a small
// one from encodings computed once under a long-term key, after Kiss,
// Liu, Schneider, Asokan and Pinkas (PETS 2017; section "Unbalanced
// sets"). Auto (ModeAuto) picks one of them from the set sizes, per
// exchange.
//
// Where to start reading: Intersector (intersect.go) and its five
// implementations ECDH (intersect.go), OT (ot.go, with otreceive.go and
// otsend.go), VOLE (vole.go and volesend.go, over svole.go, cot.go,
// okvs.go and gf128.go), Unbalanced (upsi.go, with upstore.go, upfilter.go and
// upmessages.go) and Auto (auto.go); RunAlign (align.go) for n parties. Each
// runs over a Network (network.go), which a job gets from StepNetwork and
// a test can write in memory; Intersect and Align are the job-facing
// wrappers. The pure steps, without I/O, are in ecdh.go (HashBlind,
// DoubleBlind, Match) and kkrt.go (code words, the extension, cuckoo
// hashing, the OPRF); the wire messages in messages.go and otmessages.go.
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
// Both parties run ECDH (Run over networks of the same Scope, or Intersect
// in the same job step) with the same Config, naming each other. Each removes repeats from its elements (a value given many
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
// alone. Over StepNetwork, messages carry the step's job, phase, round,
// attempt and channel, so messages of other steps or edges never answer
// these; run several PSIs in one step on sub-channels (job.Step.Sub, or
// Network.Sub).
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
// For record-id alignment (vertically partitioned integration), Align intersects n sets as a star
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
// Semi-honest parties. ECDH: hash-to-group modelled as a random oracle,
// and the decisional Diffie–Hellman assumption in ristretto255. OT:
// SHA-256 (a long element's digest and F) modelled as a random oracle,
// AES as a pseudorandom permutation (the code, the PRG and the digests'
// re-keying; a short element's digest needs only that AES is a
// permutation, to be collision-free), the base OTs secure
// under ristretto255's computational Diffie–Hellman assumption (circl's
// simot, Chou–Orlandi), and KKRT16's analysis of the code width.
//
//   - ECDH.Intersect: each party learns the intersection (which of its own
//     values the peer holds, Result.Indices and Size) and the number of
//     distinct values the peer put in (Result.PeerSize), and nothing about
//     the peer's other values: they reach it only as H(y)^(k_B) and
//     H(y)^(k_A·k_B), pseudorandom without k_B. The order of what is sent
//     is a fresh uniform shuffle, so it says nothing about table order.
//     How many rows share a value is not revealed (repeats are removed
//     before blinding). TestLeakage checks every message.
//   - OT.Intersect: the same as ECDH. The receiver learns the
//     intersection and the sender's number of distinct values, and about
//     the sender's other values only OPRF outputs it cannot compute
//     without the sender's s (pseudorandom); the sender learns the
//     receiver's number of distinct values, the cuckoo attempt (below),
//     and, from the receiver's filter, which of its own values are shared,
//     and about the receiver's values nothing else: the extension matrix
//     u^j is masked by G(k1_j), whose seed it never holds. The sender's
//     values are sent in a fresh uniform shuffle. TestOTLeakage checks
//     every message for elements, digests and code words.
//   - VOLE.Intersect: the same as OT. The receiver learns the
//     intersection, the sender's number of distinct values, and about
//     the sender's other values only hashes of Decode(C, x) + Δ·(…) it
//     cannot compute without Δ; the sender learns the receiver's number
//     of distinct values, the OKVS attempt (below), and from the filter
//     which of its own values are shared. D = P + A reaches it masked by
//     the VOLE vector A, pseudorandom under dual LPN, and the IKNP matrix
//     by G(k1_j). TestVOLELeakage checks every message for elements,
//     digests and OKVS values H(x).
//   - Align: every party learns which of its own values are in every
//     party's set (and so its size) and the hub's set size. The hub also
//     learns, for each spoke, the spoke's set size and which of the hub's
//     values that spoke holds (the pairwise intersections, which can be
//     larger than the common one); spokes learn no pairwise intersection.
//     The same in every mode. Pick a hub the consortium accepts learning
//     that.
//   - Everyone observing the network learns message sizes and counts,
//     hence set sizes, and timing.
//
// Nothing in the Raft log: the result is each party's own, and a job
// should commit only what it may publish (for sjc, nothing: the edge's
// shared values stay with its two endpoints).
//
// # Security model and what is not checked
//
// Semi-honest, as the rest of Cohort. A malicious party can
// put in values it does not hold and so test whether the peer holds them
// (inherent to PSI: the set is its input); can return wrong doubles, which
// make the honest party's intersection wrong (there is no proof that the
// same k was used for every element, as a Chaum–Pedersen proof per element
// would give); and can give the peer a result it did not learn itself.
// In OT mode a malicious party can do more, since KKRT16 is proved
// secure against semi-honest parties only: a receiver that sends a
// matrix not derived from code words can learn bits of the sender's s
// and so test the sender's set for more values than its own set holds,
// and a sender can send arbitrary values (the receiver's result is then
// wrong). Malicious-secure variants (Rindal and Rosulek, EUROCRYPT 2017;
// RR22) would be needed to close that.
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
// # Fast mode (OT)
//
// OT.Intersect (and Align with Config.Mode = ModeOT) runs KKRT16's
// batched OPRF and the PSI built on it, written here from the paper (no
// Go library that could be used provides it: github.com/optable/match
// cannot be fetched through the module proxy, see docs/psi.md). The Receiver (Align's hub) is the OPRF receiver, the
// Sender (every spoke) the OPRF sender. Each party removes repeats and
// reduces every distinct element x to a 128-bit digest d(x), under a key
// from tag, DomainTag of the step and Config.Edge, so digests are bound
// to the job, step and edge: an element of at most 15 bytes, or a
// one-value key (EncodeKey) with at most 15 bytes of text or digits, is
// encoded injectively into one block and encrypted with AES-128 under
// SHA-256("cohort-psi-v1:short-digest:" ‖ K)[:16], so two different ones
// never share a digest; any other element has SHA-256(K ‖ x)[:16], with
// K = SHA-256("cohort-psi-ot-v1:digest:" ‖ tag). Once both parties hold
// the joint seed (step 3) each re-keys its digests, d(x) ← AES_{K_d}(d(x))
// with K_d from the seed, so that no element chosen before the run can
// steer a digest's bits; d(x) below is the re-keyed digest. Then, with
// k = 512:
//
//  1. Base (psi/ot-base, receiver → sender): the receiver's set size n_R,
//     a 16-byte seed share, and the first message A_j of k 1-out-of-2 OTs
//     (circl's ot/simot, Simplest OT, over ristretto255) in which it
//     offers two random 16-byte PRG seeds k0_j, k1_j.
//  2. Choice (psi/ot-choice, sender → receiver): the sender's set size
//     n_S, its seed share, and each OT's B_j, for a secret uniformly
//     random choice vector s ∈ {0,1}^k.
//  3. Keys (psi/ot-keys, receiver → sender): both AES-GCM encryptions of
//     each OT's seeds; the sender decrypts k_{s_j}. Both now derive the
//     joint seed SHA-256(label ‖ tag key ‖ share_R ‖ share_S) and from it
//     the AES keys of the digests' re-keying, the code and the cuckoo
//     hash functions.
//  4. Matrix (psi/ot-matrix, receiver → sender, in chunks of whole
//     128-row blocks): the receiver cuckoo-hashes its digests into
//     m = ⌈1.27·n_R⌉ bins (2·n_R below 4096 elements), rounded up to a
//     multiple of 128, with 3 hash
//     functions h_0..h_2 (AES under a key from the joint seed and the
//     attempt number, reduced to [0, m)); an empty bin gets a random
//     dummy code word. Row i of the m×k matrix C is the code word
//     C(r_i, h) of the element r_i in bin i under the hash function h that
//     placed it: 64 bytes of AES-128-CTR under a key K_h (one per hash
//     function, from the joint seed) starting at d(r_i) with its two low
//     bits cleared, i.e. block j is AES_{K_h}(d′ + j), so one element
//     under two hash functions has unrelated code words (the OPRF input
//     is x‖h). It sends u^j = G(k0_j) ⊕ G(k1_j) ⊕ c^j for each column j
//     (G: AES-128-CTR from the seed, from block lo/128 of the chunk), and
//     keeps t^j = G(k0_j). The sender sets q^j = G(k_{s_j}) ⊕ s_j·u^j, so
//     row q_i = t_i ⊕ (C(r_i) ∧ s). The first chunk names the cuckoo
//     attempt.
//  5. Values (psi/ot-values, sender → receiver, in chunks of
//     Config.ChunkSize elements): for each of its elements y, in a fresh
//     uniformly shuffled order, and each h, the OPRF value at bin
//     b = h(y): F(b, q_b ⊕ (C(y, h) ∧ s)), where F(i, v) is SHA-256 of
//     the joint seed, i and v, truncated to ⌈(40 + log2(3·n_R·n_S))/8⌉
//     bytes (11 at a million per side), so the chance of any false match
//     is below 2^-40. For y = r_i and the h that placed it this is the
//     receiver's own F(i, t_i); the receiver matches each of its elements
//     against the sender's values under the hash function that placed it.
//  6. Filter (psi/filter, receiver → sender): one bit per element the
//     sender sent, set where it matched (in Align, where it matched an
//     element in every party's set). Both parties end with the Result
//     ECDH would have given them.
//
// Parameters. k = 512 columns. KKRT16 (§3–4) needs the pseudorandom code
// to put every two different inputs at Hamming distance at least κ = 128
// (so (C(x) ⊕ C(y)) ∧ s keeps κ bits of the sender's secret), except
// with probability 2^-λ, λ = 40, and derives its code width from that.
// We check the bound ourselves rather than quote the paper's table: for
// random 512-bit code words, P[distance < 128] = 2^-102.3 (exact binomial
// tail), and over every pair of the two parties' inputs under 3 hash
// functions at the largest sets psi accepts (3·2^22·2^22 ≈ 2^45.6 pairs,
// DefaultMaxElements = 2^22) the union is 2^-56.7 < 2^-40; 448 bits would
// give only 2^-20.9 by the same bound. (A larger Config.MaxElements keeps
// the union below 2^-40 up to about 2^30 elements per side.) 512 is also
// four AES blocks
// (a code word is 64 bytes of AES-CTR). Cuckoo hashing with
// 3 functions and 1.27·n bins is the setting of KKRT-style PSIs since
// Pinkas, Schneider, Weinert and Wieder ("Efficient circuit-based PSI
// via cuckoo hashing", EUROCRYPT 2018), whose failure probability falls
// with n (psi has not re-derived their 2^-40 figure); below 4096 elements
// psi uses 2n bins, because at 1.27·n first attempts measurably fail
// there (4 in 20,000 at 100 elements in 128 bins). psi uses no stash: a
// failed insertion (a random walk of more than 100 + 10·log2 n
// evictions) rehashes with the next attempt's keys, up to 8 attempts,
// then fails the PSI with an error; an element is never silently left
// out. TestCuckooFailureRate's long run (PSI_CUCKOO_LONG=1) saw no failed
// first attempt in 156,500 trials from 64 to 20,000 elements;
// TestCuckooRehash exercises the retry. A rehash is the one thing the
// sender learns beyond the sizes: that the receiver's set did not fit the
// earlier attempts' hash functions, whose keys it knows (so the set is
// among the rare sets that fail under them).
//
// Checks. Every size is checked against Config.MaxElements (capped at
// 2^28 in OT mode, whose indices are 32-bit) before anything is
// allocated from it (n_R and n_S in the first messages; m is
// a function of n_R, and a matrix chunk claiming another m is refused);
// chunks must come in order with the exact length; the cuckoo attempt
// must be below 8 and the same in every chunk; base-OT elements must be
// canonical, non-identity ristretto255 encodings; a base-OT ciphertext
// that does not decrypt is ErrPeer. Run ids tie the messages of one run
// together as in ECDH: a receiver that restarts mid-exchange gets
// ErrRestarted from the answer to its old run; the sender, stuck on the
// old run, ends with its context (the step's timeout), and the step is
// run again. Every AES, SHA-256 and transposition loop is spread over
// GOMAXPROCS goroutines owned by the call. The sender uses each chunk of
// the extension matrix as it arrives for exactly the values whose bin it
// holds, so it never stores the whole matrix.
//
// Not constant time: cuckoo hashing, the tables and the matching branch
// on digests and OPRF values, on the party's own machine; simot's group
// operations are circl's (constant-time scalar multiplication).
//
// # VOLE mode
//
// VOLE.Intersect (and Align with Config.Mode = ModeVOLE) runs RR22's
// semi-honest PSI (§4, Fig. 4), written here from the papers. Roles,
// digests d(x), run ids and the closing filter are the OT mode's. The
// receiver holds Y, the sender X. The field is GF(2^128) with modulus
// X^128 + X^7 + X^2 + X + 1 (gf128.go).
//
//  1. Base, choice, keys (psi/vole-base, psi/vole-choice, psi/vole-keys):
//     as OT's first three messages with 128 base OTs, the sender's choice
//     bits being its VOLE secret Δ; both derive the joint seed.
//  2. Matrix (psi/vole-matrix, receiver → sender, one message): the IKNP
//     extension (Ishai, Kilian, Nissim and Petrank, CRYPTO 2003) of
//     t·(depth + 128) correlated OTs q_i = t_i + r_i·Δ (cot.go), whose
//     choice bits r are the receiver's secret noise: the complement of
//     each noise position's path bits, then 128 bits of each noise value.
//  3. Trees (psi/vole-trees, sender → receiver, one message): the silent
//     VOLE (svole.go) of Boyle, Couteau, Gilboa, Ishai, Kohl and Scholl
//     (CRYPTO 2019, §5, dual LPN) with Wolverine's single-point VOLE
//     (Weng, Yang, Katz and Wang, IEEE S&P 2021, §3): per block j of the
//     noise, the sender expands a GGM tree (fixed-key AES, Guo, Katz,
//     Wang and Yu, IEEE S&P 2020) and sends each level's even and odd
//     sums masked with the random OTs of one correlated OT, and
//     γ_j = b_j + Σ_i v_j[i], b_j its share of a base VOLE folded from 128
//     correlated OTs. The receiver rebuilds every leaf but α_j's and sets
//     w_j[α_j] = γ_j + c_j + Σ_{i≠α_j} v_j[i] = v_j[α_j] + a_j·Δ. Both
//     compress with the expand-accumulate code H (Boyle, Couteau, Gilboa,
//     Ishai, Kohl, Resch and Scholl, CRYPTO 2022; the expander's indices
//     from AES-128 in counter mode under a key from the joint seed): the
//     receiver gets A = H·e, C = H·w, the sender B = H·v, with
//     C = B + A·Δ.
//  4. OKVS (psi/vole-okvs, receiver → sender, chunks of Config.ChunkSize
//     elements): the receiver encodes {d(y) ↦ H(y)} (H: AES of d under a
//     key from the joint seed) in the random-band OKVS P (okvs.go) and
//     sends D = P + A; the first chunk names the OKVS attempt.
//  5. Values (psi/vole-values, sender → receiver, chunks): K = B + Δ·D =
//     C + Δ·P, and for each x in a fresh shuffled order the first
//     ⌈(40 + log2(3·n_R·n_S))/8⌉ bytes of SHA-256(output key ‖ d(x) ‖
//     Decode(K, x) + Δ·H(x)), the output key 16 bytes from the joint seed
//     (which binds the label). For x ∈ Y this is the receiver's own
//     hash of Decode(C, x), which it matches.
//  6. Filter (psi/filter): as in OT mode.
//
// Parameters (128-bit computational, 40-bit statistical security). LPN:
// regular noise, N ≥ 5m, weight t ≥ 398 with t blocks of a power of two
// (about 705 blocks of 8192 at m = okvsSize(2^20)), and an expander of
// weight 11. These are libOTe's configuration of the EA code (ExAcc11:
// expansion 5, weight 11, relative minimum distance taken as 0.1), with
// t from the bound the EA paper's linear-test analysis gives for regular
// noise, (1 − 2·0.1)^t ≤ 2^-128. OKVS: Bienstock, Patel, Seo and Yeo's
// random band (USENIX Security 2023), m = ⌈1.1·n⌉ + 256 columns, band
// w = 256: their fit λ ≈ 0.2691·w − 15.21 at ε = 0.1 puts a failed
// encoding near 2^-53; a failure rehashes with the next attempt's keys (4
// in all, then an error), which tells the sender the set failed under
// the earlier keys, as a cuckoo rehash does in OT mode. TestOKVSFailureRate
// encodes 40 times without a failure and checks that an overfull system
// is always refused.
//
// Security, in a paragraph: the sender's view is the receiver's base-OT
// messages, the IKNP matrix (masked by the PRG of seeds it never holds)
// and D = P + A; A is H·e with e regular noise of weight t, which dual LPN
// for the EA code makes pseudorandom, so D is pseudorandom whatever Y.
// The receiver's view is the GGM messages, each level sum masked by a
// random OT it cannot open at the chosen path, which leaves v_j[α_j]
// pseudorandom (the punctured PRF) and so γ_j a one-time pad of Δ·a_j,
// and the sender's hashed values: for x ∉ Y the hash input carries
// Δ·(Decode(P, x) + H(x)) with Decode(P, x) ≠ H(x) except with
// probability 2^-128 per x, unpredictable without Δ, and the hash, a
// random oracle, hides the linear structure (without it one guessed x
// would give Δ). This is RR22's semi-honest argument (their §4) with
// our choices of VOLE and OKVS. RR22's subfield VOLE (A over a small
// field, for fewer bytes) is not used: A, B, C and Δ are all in
// GF(2^128).
//
// Checks: as OT's; the matrix and the trees must have the exact length
// the sizes imply (both derive it from n_R); the OKVS attempt must be the
// same in every chunk and below 8. A sender that sends wrong trees or
// values makes the receiver's result wrong, as in OT mode.
//
// Not constant time: the OKVS elimination and decoding, the tables of
// Δ's multiples (a cache-timing channel on the sender's own machine) and
// the matching.
//
// # Choosing the mode (Auto)
//
// OT's 512 base OTs cost about 0.13 core-seconds per exchange whatever
// the sets; ECDH costs about 140 core-µs per element. With
// Config.Mode = ModeAuto (Auto, and every exchange of Align), the two
// parties first send each other their number of distinct elements
// (psi/size, disclosure psi-blinded) and both run ECDH when the two sizes
// add up to less than AutoOTMin (1024), OT from there, and VOLE from
// AutoVOLEMin (2^15), where VOLE's fixed 1.5 MB is paid back by its 15
// bytes per element against OT's 57, and its CPU is 2.5–6 times less.
// Nothing is disclosed that any of the protocols does not disclose anyway
// (the sizes; VOLE's leakage is OT's); in Align each spoke agrees with the
// hub on its own, so a small spoke runs ECDH and a large one OT or VOLE in
// the same alignment. A party that
// restarts after the sizes were exchanged waits for a size its peer
// already sent; the step's timeout ends it and the step is run again.
//
// Auto also picks the unbalanced mode (below) when the larger set is at
// least UnbalancedMinServer (4096) distinct elements, at most
// UnbalancedMaxServer (2^24), at least UnbalancedRatio (64) times the
// smaller, and its holder keeps a Store (Config.Store; the size message
// says so). The larger side serves whatever the roles. Align never runs
// it: both of its parties learn the intersection, and a spoke must not
// learn its pairwise one.
//
// # Unbalanced sets
//
// Unbalanced (ModeUnbalanced, or Auto as above) is the OPRF-based PSI in
// the precomputation form of Kiss, Liu, Schneider, Asokan and Pinkas,
// "Private Set Intersection for Unequal Set Sizes with Mobile
// Applications" (PETS 2017, "KLSAP17"), with their Diffie–Hellman OPRF
// F_k(y) = H(y)^k: the server (the large set) computes its set's OPRF
// values once under a long-term key k and sends the client a compact
// filter of them once; each exchange then costs work and bytes linear in
// the client's set only. The server is the Sender of Unbalanced (the
// larger side in Auto), the client the Receiver.
//
// Offline (Store.prepare, the first exchange with a new or changed set,
// inside its step): the server draws k and a random 16-byte epoch,
// computes H(y)^k for every distinct y under the tag upTag(filter id,
// epoch) on every core, and keeps in its data dir (job.Secrets: files
// of mode 0600, replaced atomically) the key file (k, the filter id, the
// epoch, the sizes and a SHA-256 digest of the elements in order), each
// position's fingerprint, and the filter. The filter is the fingerprints
// (the top h + 40 bits of SHA-256 of H(y)^k, 2^h ≥ n) in Elias–Fano form,
// about 42 bits per element (upfilter.go); a value not in the set
// matches with probability at most n·2^-(h+40) ≤ 2^-40 per query.
//
// Online, over the step's network like every mode:
//
//  1. Offer (psi/up-offer, server → client): its run id, the filter's id
//     and epoch, its number of distinct elements N and the filter's shape.
//  2. Fetch (psi/up-fetch, client → server): the client's run id and
//     whether it needs the filter (it holds none of this id and epoch).
//  3. Query (psi/up-query, client → server, chunks): H(x)^r for each
//     distinct x, r fresh per run, in a fresh shuffle.
//  4. Filter (psi/up-filter, server → client, 4 MiB chunks), if asked.
//  5. Eval (psi/up-eval, server → client, chunks): each query raised to
//     k, in the order received.
//  6. Match (psi/up-match, client → server): the client unblinds with
//     1/r, looks each fingerprint up in the filter, and sends the matched
//     fingerprints, ascending; the server finds the positions of its
//     elements holding them. Both end with the Result ECDH would give.
//
// Key and scope. The server's key lives only in its data dir, in a file
// named by a hash of Store.Scope, which names the dataset and join
// columns (TableStore, for sjc and boost: the kind, the purpose, the data
// the table resolves to on the node and its join columns, never a spec's
// name for the table); it is
// never sent, logged or committed. Each exchange checks the set against
// the key file's digest; a changed set gets a new key and a new epoch
// (the filter id stays), so two epochs' filters are unrelated. A crash
// while preparing leaves the old epoch or files the key does not name;
// two exchanges preparing one scope at once can mix their files, which
// the next load or filter send notices, voiding the key so the one after
// prepares again.
//
// Client cache. A client keeps each filter it fetched in its data dir,
// named by a hash of the peer's name and the filter id, with the epoch
// and sizes; an offer of another epoch (or sizes) makes it stale and the
// client fetches the new filter and replaces it. A cache it cannot read
// is fetched again.
//
// Leakage (semi-honest; with H a random oracle, H(y)^k for values the
// client never had evaluated is pseudorandom under the one-more
// Diffie–Hellman assumption, the usual one for this OPRF, since the
// client sees many evaluations under one k):
//
//   - The client learns the intersection, the server's N, the filter id
//     and epoch, and from a new epoch that the set changed and its new
//     size, not which elements changed (the key is new). The filter lets
//     it test only values whose H(x)^k it obtained, that is, the values
//     it queried in an exchange; across exchanges it can query other
//     sets, each of its announced size, as it could by running ECDH again.
//   - The server learns the client's number of distinct values, whether
//     it held the filter of this epoch, and the intersection (from the
//     matches), as OT's sender does from the filter; the queries are
//     H(x)^r for an r it never sees.
//   - Observers learn sizes and whether a filter was sent.
//
// TestUnbalancedLeakage checks every message; TestUnbalancedCache the
// key's rotation, the cache and a restart; TestSimUnbalanced (sjc: a
// restart and a renamed table keep the key; boost) over real nodes. A malicious client could query values it does not
// hold, up to its announced size, and a malicious server could answer
// with another key (the client's result is then wrong), as in ECDH. The
// fingerprints, the filter's lookups and the matching branch on their
// values, on each party's own machine.
package psi
