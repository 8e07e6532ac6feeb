// Package probe is the deployment probe: one secure aggregation over the
// consortium of a vector of public pseudo-random values, so that an
// operator checks that every member's keys, connections and policy work
// together and measures a round of secure aggregation over the real
// network, at the length the consortium's jobs will use, without any
// member's data. It is to a consortium what FATE's toy example is to a
// FATE deployment.
//
// # Protocol
//
// First the joint seed's two steps (seed-commit and seed-reveal,
// job.JointSeed): every party commits to 32 random bytes it keeps, then
// opens them once every commitment is in the log; the seed is their hash,
// which no party, and not the coordinator, chose. Then one step (phase
// "aggregate"), which a party refuses, naming the coordinator, until the
// log holds that seed with its own contribution in it: each party derives
// its vector of params.values integers in [0, 2^20) from the joint seed
// and its own name
// (SHA-256 of both seeds a ChaCha8 generator), aggregates it with
// secureagg.Aggregate on params.backend (auto, paillier or lattice; auto
// picks by length as every job does), and checks the decrypted total
// against the sum of every party's vector, which it derives itself: the
// vectors are public, so the check is exact and local. It reports to the
// coordinator its aggregation's outcome without the sum, the SHA-256 of
// the sum and, if the total is wrong, the first value that differs. The
// coordinator commits the round's decision: the digest, who is in the sum
// and whose shares were excluded; or the job fails naming every party
// that did not take part and why, or the party whose total differed. A
// probe never re-runs over fewer parties: it is there to show what fails.
//
// The job's timing (cohort job show, result.json) gives the round's
// duration as the log committed it, and each node's ledger the bytes it
// sent; scripts/cluster.sh records both for a spec of kind probe.
//
// # Leakage profile
//
// A probe reads no table. A party sends only what secureagg sends (see
// its package doc: ciphertexts, decryption shares and, on the lattice
// backend, sketch keys and sketches) of a vector that every member can
// derive from the joint seed, and reports to the coordinator the outcome
// (who is in the total, who was excluded and why, who was missing) and
// the digest of the public total; in the joint seed's steps, its
// commitment, then its opening (random bytes, public once opened).
// Nothing a party holds leaves it; the log holds the commitments and
// openings, the digest, the included and excluded parties and the length.
// TestProbeOverRealNodes checks every ledger entry against this.
package probe
