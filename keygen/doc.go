// Package keygen is the job kind that generates the consortium's threshold
// Paillier key without a dealer (spec `kind: keygen`, `params: {bits:
// 2048}`, no tables), with package paillier/dealerless doing the
// cryptography. It is the default way to set up the key for 3 or more
// members (`cohort keys generate`); `cohort keys deal` remains for two
// members and for tests and demos.
//
// # Steps
//
//  1. generate (one step, all parties): every party runs
//     dealerless.Generate; each protocol round is a sub-channel of the step
//     (Step.Sub) and travels as peer messages. The attempt's public seed is
//     derived from the job's seed and the attempt number, and every secret
//     comes from crypto/rand, so a re-run attempt (after a restart or a
//     leader change) starts over from fresh randomness. A party that holds
//     a verified key stages its files under keys/keygen/JOB/ATTEMPT/ with
//     Secrets.WriteSecret and reports the key id, the candidate count and
//     its phase times to the coordinator. The coordinator commits the key
//     id only if every party reports the same key from the same attempt.
//  2. install (one step, all parties, args: attempt and key id): each party
//     checks that its staged key is the agreed one and writes
//     keys/threshold.share, keys/threshold.pub (secureagg's files, as
//     `cohort keys deal` writes them) and keys/threshold.info (made:
//     dealerless).
//
// Result: key_id, bits, threshold (shares that decrypt, ⌊(n−1)/2⌋+1),
// candidates (pairs tried), generation_timing (seconds of the slowest party
// per phase: sieve, biprimality, convert, verify) and made. In `cohort sim`
// the Assembler copies each party's files to DIR/keys/PARTY/.
//
// # Faults
//
// A party that fails, crashes or goes silent during generate aborts the
// job with its name (its peers' rounds fail on the missing message or at
// the step's timeout, params.timeout_ms, default 10 minutes); nothing is
// installed anywhere, staged files of the failed attempt are never read.
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
// keygen-share (pair seeds, Shamir shares of candidate shares and of the
// conversion's secrets, openings of masked values to their owner) and
// keygen-public-value (biprimality values, verification keys, the test
// decryption shares). Package dealerless's doc says what each reveals.
// Party outputs and the log hold public values only: key ids, the
// candidate count, phase times, the attempt number and failure reasons.
// No share leaves its party; TestKeygen checks every message and log
// record against the installed shares.
package keygen
