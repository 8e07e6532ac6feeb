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
// # Tables
//
// A probe spec may give parties tables, with a schema, as any job's spec
// does (on running nodes by name alone, each node mapping the name in its
// catalogue). Before it aggregates, each such party checks each of its
// tables where the table lives, as a job would read it, without loading
// it (table.Check, the Aggregator's query: for a database, one query
// pushed down that counts the rows and the rows table.Open would refuse,
// after the result's columns are checked against the schema; a file is
// streamed, keeping only that count). A table that fails makes the party
// withdraw, naming the table and why, and the probe fails showing it; a
// check cut short by the attempt's end is that attempt's failure only. The
// result lists, per party, the spec's names of the tables checked (the
// coordinator fails the probe if a party checked others than its spec's).
// The pushed-down query is in the party's node's own log at debug level,
// never in a message or the Raft log.
//
// # Leakage profile
//
// A probe discloses nothing of a table: a party checks its tables at home
// and reports only the spec's names of those it checked, or, as any job
// reading the table would, why one cannot be read (naming the source by
// its label, the column and the row, never a value). A party sends only
// what secureagg sends (see its package doc: ciphertexts, decryption
// shares and, on the lattice backend, sketch keys and sketches) of a
// vector that every member can derive from the joint seed, and reports to
// the coordinator the outcome (who is in the total, who was excluded and
// why, who was missing), the digest of the public total and the tables it
// checked; in the joint seed's steps, its commitment, then its opening
// (random bytes, public once opened). Nothing a party holds leaves it; the
// log holds the commitments and openings, the digest, the included and
// excluded parties, the length and the spec's names of the tables
// checked. TestProbeOverRealNodes checks every ledger entry against this;
// TestProbeChecksTablesWhereTheyLive that the pushed-down query stays in
// the node's log.
package probe
