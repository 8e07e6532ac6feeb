// Package secureagg sums vectors held by the parties of a job step so that
// each party learns the sum and its own input and nothing else: threshold
// secure aggregation after Phoenix (Waseem Ahmad and Ashfaq Khokhar,
// "Phoenix: Privacy Preserving Biclustering on Horizontally Partitioned
// Data", PinKDD 2007, LNCS 4890, pp. 14–32: the tree of parties,
// homomorphic aggregation, threshold decryption). Start with Aggregate,
// then Outcome and Fold.
//
// # Protocol
//
// Every party of the step calls Aggregate with the same step. The parties
// form a balanced k-ary tree (Config.Fanout, default 4) rooted at the first
// party that is not the step's coordinator (Root), the coordinator placed
// last, at a leaf; every party derives it from the committed step, so no
// message builds it and its depth is ⌈log_k N⌉ (a deterministic tree, not
// the paper's self-stabilising one).
//
//  1. Up (secureagg/up, disclosure ciphertext). Each party encodes its
//     values in fixed point (round(x·2^FracBits)), checks them
//     against ±2^ValueBits, adds its noise share if asked, packs many values
//     per plaintext (paillier.Packing, with room for N summands) and
//     encrypts under the consortium's threshold key. It multiplies in each
//     child's subtree product and sends the product to its parent.
//  2. Down (secureagg/down, ciphertext). The root sends the total's
//     components down the tree: its own input and each of its children's
//     products, which those children also digest to every other party
//     (secureagg/digest, control). The root's own input was committed
//     first: the root sends its children its digest (secureagg/commit,
//     control) and they send their products up only once they hold it, and
//     repeat it in their digests (commit.go). Every party checks the
//     components against the digests and the commitment and forms the total
//     itself; it makes a decryption share of nothing else (ErrTampered).
//  3. Share (secureagg/share, decryption-share). Every party sends the
//     root its decryption share of the total, with one batched proof bound
//     to the key, its index and the step's job, phase, round and attempt.
//     With Config.Decryptors = m only the first m parties in tree order do
//     so up front, and the root asks the others (secureagg/share-request,
//     control) only when fewer than t+1 of those shares are valid.
//  4. Result (secureagg/result, public-result). The root verifies every
//     share, combines t+1 valid ones, range-checks the sum and sends its
//     packed plaintexts (or the reason there is none) down the tree; every
//     party unpacks, range-checks and decodes them and returns the sum.
//  5. Formed (secureagg/formed, control: one flag). Every party that makes
//     a decryption share of the total tells every other party so directly
//     as the share leaves; a party that ends without the total tells them
//     it made none, and listens for the others' notices until the last
//     share can have left. A notice of a share marks its failure formed
//     (MissingError.Formed, ErrFormed), so its guard refuses a later
//     aggregate without a party of this one, whatever the root passed down
//     (formed.go).
//
// Every message carries the step's job, phase, round and attempt,
// so messages of different rounds or attempts never answer each other.
// Bodies are msgpack, decoded strictly: unknown fields, wrong lengths,
// names outside the step and ciphertexts outside Z*_{n²} are errors.
//
// # Network
//
// The protocols do all their I/O through a Network (network.go): typed
// byte strings to and from named parties, each sent with what it
// discloses, and sub-channels for a lattice blob's parts and each
// quorum's shares. What the bytes mean, and every check on what arrives,
// are this package's; the job.Step the protocols are given only says who
// takes part, who coordinates, and what digests and share proofs are
// bound to. A job runs them over StepNetwork(p, step), which keys every
// message by the step's job, phase, round, attempt and channel and records
// its disclosure in the ledger; Aggregate and Withdraw do that for it, a
// Decryption is given its Net. A test can run them over a network in
// memory without the job runtime.
//
// # Faults
//
// Waits follow a schedule in hops of Config.Timeout counted from the start
// of Aggregate, deeper waits getting more hops, so the party nearest a fault
// notices first and names the right party.
//
//   - A child that does not deliver its subtree's product in time, or
//     delivers a malformed one, makes the attempt fail: a parent cannot drop
//     a subtree silently (the sum would quietly omit live parties). The
//     root returns *MissingError naming the parties, the others learn it
//     from an abort sent down the tree, and the coordinator re-runs the
//     step without them (a new Attempt). Parties below a failed node, which
//     the abort cannot reach, time out waiting for it and return
//     *MissingError naming their parent, passing that verdict further down;
//     so every live party ends with a MissingError, not a bare timeout. A
//     party whose own input is out of range returns ErrRange and is named
//     missing by the others.
//   - A party whose decryption share is late, malformed or fails its proof
//     is named in Result.Excluded and left out of decryption; decryption
//     completes while t+1 valid shares remain, else every party gets an
//     error naming the excluded (ErrTooFewShares at the root, ErrRoot
//     elsewhere). An excluded party's input is still in the sum: it was
//     excluded after the aggregate was formed (Result.Included lists whose
//     inputs are in the sum).
//   - A decrypted slot that no N in-range inputs can produce is ErrRange,
//     never a value. This range check does not stop a
//     malicious party from contributing any in-range value (no range
//     proofs).
//
// # Leakage profile
//
// A party sends only ciphertexts (its subtree's product up, the total's
// components down to its children), a digest of its product when it is a
// child of the root (with the root's commitment it received), the root's
// commitment to its own input when it is the root, its decryption share of the total with a proof,
// a formed notice (whether it made a share) to every other party, and,
// if it is an inner node, the public result. Under semi-honest parties and an
// honest majority (at most t colluders, N ≥ 2t+1), every party learns the
// sum (plus noise when asked for), the list of parties in the sum and of
// excluded ones, the vector length, and message sizes and timing; nothing
// about another party's input beyond what the sum reveals. The root learns
// no more than others: it holds one key share, and the total can only be
// decrypted with t+1 shares, each of which decrypts only the total its
// party formed itself from digest-checked components, the root's own
// committed before it received any other (TestRootOwnInputCommitted); the root is never
// the coordinator, and the coordinator, a leaf, sees no other party's
// ciphertext before it sends its own (TestDecryptionOracleRefused). A
// party's own encrypted input is not proven in range or known to it: a
// party that forges its own contribution is outside this model. The test
// TestLeakage checks one party's outgoing messages against this profile.
//
// # Differential privacy
//
// With Config.Noise each party adds a noise share to every value before
// encryption, so only the noisy sum is ever decrypted (distributed noise
// generation as in Dwork et al., "Our data, ourselves", EUROCRYPT 2006):
// for Laplace a difference of two Gamma(1/m, b) variables, b = Δ1/ε, whose
// sum over m parties is Lap(b); for Gaussian N(0, σ²/m), σ =
// Δ2·√(2 ln(1.25/δ))/ε (ε < 1). m = N − Noise.Colluders, so the shares of
// the parties outside a coalition alone carry the full noise. Shares are
// drawn from a ChaCha8 generator seeded from crypto/rand and bounded at 64
// scales (redrawn beyond, a probability below e^-64) so the packing can
// reserve room for them. Result.Noise records mechanism, ε, δ, sensitivity
// and scale; budgeting across rounds is each node's policy (policy.Guard.Spend). Floating-point
// sampling is not hardened against Mironov's attack.
//
// # Lattice backend
//
// Config.Backend = BackendLattice runs the same tree, schedule, drops and
// re-planning with multiparty BGV (package lattice) in place of threshold
// Paillier (one schedule, runTree in rounds.go, does the tree's sends and
// receives, and one driver, exchange.go, the decryption's requests and
// shares, for either backend's type, paillier*.go or lattice*.go, which
// encode, decode, add, check and plan without I/O): milliseconds of CPU per 10,000 values instead of seconds, at
// least one ciphertext of 393 KB per party whatever the length. Choose
// resolves a job's params.backend (auto picks the lattice backend from
// LatticeFrom values on; docs/secureagg.md has the cross-over). Blobs
// beyond a message's size travel in parts (lattice_wire.go). The
// differences:
//
//   - Exact sums: values are encoded as on the Paillier path (same
//     rounding, same ±2^ValueBits check before encryption, ErrRange naming
//     the bound, never the value) and packed by lattice.Layout with room for N
//     summands, so no in-range sum wraps; ValueBits plus the noise share's
//     bound must stay below 2^62 (LatticeFits refuses more, naming 2^62).
//     Both backends return the same sums to the bit
//     (TestLatticeMatchesPaillier).
//   - Vetting by sketches (lattice_sketch.go): the root sends down only
//     the total's mask and its own contribution's (committed as on the
//     Paillier path), two masks instead of one per child of the root plus
//     its own. Every party but the root sends each of the root's children
//     a secret key at the start (secureagg/seed, control); each child of
//     the root answers with a sketch of its subtree sum under that key
//     (secureagg/sketch, ciphertext: 48 bytes of linear combinations of
//     its coefficients) and the commitment it received; every party checks
//     that the total is its own contribution plus the sketched subtrees
//     (lattice.Decryptor.TargetFromSketches). The root fixed the total before
//     it could know any key, so a forged total passes with probability
//     below 2^-119 (package lattice's sketch check): a party makes decryption shares
//     only of the aggregate of every party's input of this step, its own
//     among them (ErrTampered otherwise;
//     TestLatticeDecryptionOracleRefused), exactly as if it had re-summed
//     the components, for half of a round's bytes.
//   - Joint decryption: any Quorum members of the lattice key decrypt
//     (Quorum = Paillier's t+1). Each decryption share is flooded with
//     uniform noise of width 2^115 (package lattice's doc sizes it: the
//     aggregate's noise, at most 2^26.4 at 17 parties, is hidden within
//     statistical distance 2^-92.1 per coefficient at 5 parties, 2^-88.6
//     at 17), so shares reveal nothing beyond the total.
//   - Blame: a lattice decryption share has no cheap validity proof, so
//     the root decrypts with several quorums (lattice.PlanVerified: quorums no
//     single party is in all of, two disjoint ones when N ≥ 2·Quorum) and
//     compares. On disagreement it asks every party for the blame plan
//     (lattice.PlanBlame, share-request Seq 2), whose verdict names the one
//     party whose absence leaves every decryption agreeing; that party is
//     put in Result.Excluded and the agreed total is the result
//     (TestLatticeTamperedShareNamed). With N = Quorum+1 a wrong share is
//     detected but its maker cannot be told apart: the aggregation fails
//     (ErrTooFewShares) naming the suspects. With N = Quorum nothing is
//     detected beyond the range checks. Blame assumes at most one party
//     with wrong shares per aggregation.
//   - Leakage: a party sends its subtree's sum (ciphertexts) up, the
//     total's and the root's masks (ciphertexts) down, a sketch key to the
//     root's children (random bytes), sketches as a child of the root,
//     decryption shares to the root and the total's plaintext down,
//     nothing else (TestLatticeLeakage). The root
//     additionally sees each quorum's plaintext, equal unless a share was
//     wrong. Semi-honest assumptions that remain: key generation (a bad
//     Shamir share shows at the first decryption), in-range inputs (no
//     range proofs), the root's honesty about the result it sends down,
//     and at most one faulty party per aggregation for blame.
//
// # Keys
//
// The consortium's key is dealt once (keyring.Deal, a trusted dealer, or
// the keygen job) and stored in each node's data dir by package keyring,
// which owns the key files: keys/threshold.pub holds the
// public key and the sorted member list (member i holds share index i+1, a
// mapping fixed at dealing so a step over a subset of members, or a later
// membership change, cannot shift it); keys/threshold.share holds only the
// node's own share, mode 0600. Both are written atomically.
package secureagg
