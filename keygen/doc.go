// Package keygen is the job kind that generates the consortium's threshold
// Paillier key without a dealer (spec `kind: keygen`, `params: {bits:
// 2048}`, no tables), with package paillier/dealerless doing the
// cryptography. It is the default way to set up the key for 3 or more
// members (`cohort keys generate`); `cohort keys deal` remains for two
// members and for tests and demos. The shared modulus is Boneh and
// Franklin's ("Efficient generation of shared RSA keys", JACM 2001); its
// conversion to a threshold Paillier key is package dealerless's, whose doc
// cites the rest. Start reading at Kind.Coordinate (job.go), then
// session.Step (session.go).
//
// With params: {scheme: bgv} it generates instead the lattice key of
// secureagg's lattice backend (package mhe's multiparty key generation,
// any DefaultQuorum members decrypt): two steps, bgv-generate and
// bgv-install, described in lattice.go with their leakage; the files are
// keys/lattice.pub, keys/lattice.share and keys/lattice.info. The steps
// below are the Paillier key's.
//
// # Steps
//
//  0. seed-commit and seed-reveal, round 0 (all parties; job.JointSeed):
//     each party commits to a 32-byte contribution from crypto/rand, kept
//     in its Secrets for the job, and opens it once the log holds every
//     party's commitment, its own among them. Each party folds the
//     committed openings into the joint seed, checking every opening and
//     its own, and derives from it the public randomness of the key
//     generation (publicSeed: biprimality bases, H, v, the test
//     ciphertext; latticeNonce for the lattice key): uniform if one party
//     is honest. The leader's job seed is not used: a coordinator that
//     chose the bases could grind for a modulus that passes the
//     biprimality test without being one, and one that chose the lattice
//     key's common reference polynomial could weaken it.
//  1. search, rounds 0, 1, ... (all parties): each party runs
//     dealerless Party.Search over params.chunk candidate pairs (default
//     8192, a few seconds; with the distributed sieve most keys are found
//     in the first step); each protocol round is a sub-channel of the
//     step (Step.Sub) and travels as peer messages. Every step attempt
//     exchanges fresh pair seeds and draws fresh secrets from crypto/rand,
//     so a re-run attempt (after a leader change) starts over. A party
//     reports the pairs tried, the modulus N if one passed every test
//     (public) and its phase times; the coordinator commits them if every
//     party reports the same outcome, and searches on until N is found. The
//     party keeps its shares of N's factors in its session, in memory.
//     Splitting the search into steps keeps a fault cheap: a leader change
//     under load re-runs one chunk, not the whole search.
//  2. finish (args: the search round and attempt that found N): Party.Finish
//     converts the factors' shares into threshold key shares and verifies
//     the whole key with a test decryption; each party stages its files
//     under keys/keygen/JOB/ATTEMPT/ with Secrets.WriteSecret and reports
//     the key id. The coordinator commits it if every party reports the
//     same key from the same attempt.
//  3. install (args: the finish attempt and key id): each party checks that
//     its staged key is the agreed one and writes keys/threshold.share,
//     keys/threshold.pub (keyring's files, as `cohort keys deal` writes
//     them) and keys/threshold.info (made: dealerless).
//
// Result: key_id, bits, threshold (shares that decrypt, ⌊(n−1)/2⌋+1),
// candidates (pairs tried over all search steps), search_steps,
// generation_timing (seconds per phase, summed over steps of the slowest
// party of each: sieve, product, biprimality, convert, verify) and made. In `cohort
// sim` the Assembler copies each party's files to DIR/keys/PARTY/.
//
// # What a coordinator can ask
//
// Each step is a typed round (job.Round). The coordinator (the Raft leader
// of the moment) is not trusted to choose what a party converts or
// installs: every party replays the log (expect) and takes part only in
// the step it determines, on every party of the spec: the joint seed's
// two steps first (a search or a lattice generation before them is
// refused, so the key's public randomness is never the leader's alone, and
// a party whose commitment the log does not hold refuses to open and to
// go on: TestCoordinatorCannotChooseSeed); the next search
// round while no modulus is committed; then finish, of exactly the search
// round and attempt that committed the modulus; then install, of exactly
// the attempt and key id the finish step committed. Anything else is
// refused with an error that names the coordinator
// (TestCoordinatorCannotChooseKey; TestCoordinatorCannotChooseNodes plays
// a finish of another attempt, an install of another key and a forged seed
// commitment over real nodes under the default policy). A member whose
// test decryption share (finish, round check) does not verify is refused
// by every other party, which names it by its party name
// (TestHostileMemberNodes).
//
// # Faults
//
// A party that fails or crashes aborts the job with its name (its peers'
// rounds fail on the missing message); nothing is installed anywhere. A
// search step in which every party timed out (params.timeout_ms, default 2
// minutes) and none failed otherwise looks like a message lost in transit
// and is followed by the next chunk, at most twice; a party that hangs
// therefore aborts the job after three timeouts.
// A node that restarts after the search found N no longer holds its shares
// of the factors: finish fails naming it, and keygen must be run again.
// Install is atomic per node (each file is replaced whole, the share
// first) but not across nodes: if one node fails during install the job
// fails naming it, the others keep the new key, and keygen must be run
// again. The kind cannot see other jobs: running keygen while a job that
// decrypts with the key runs makes that job fail (its parties' shares no
// longer match); `cohort keys generate` documents this.
//
// # Leakage profile
//
// Messages (all of type keygen/round) carry one of two disclosures:
// keygen-share (pair seeds, Shamir shares of the sieve's units and masks,
// of candidate shares and of the conversion's secrets, openings of masked
// values to their owner, and the sieve's masked products to the first
// party) and
// keygen-public-value (biprimality values, verification keys, the test
// decryption shares). Package dealerless's doc says what each reveals.
// Party outputs and the log hold public values only: key ids, the
// candidate count, phase times, the attempt number and failure reasons,
// and the joint seed's commitments and openings (each party's output of
// seed-commit and seed-reveal, disclosed as public-result, and committed
// to the log: every member sees them, and the joint seed they fold into;
// a contribution is random and tells nothing of a party, and no message
// or log record carries it before every commitment is committed).
// No share leaves its party; TestKeygen checks every message and log
// record against the installed shares and the joint seed's profile
// (jobtest's CheckJointSeed).
package keygen
