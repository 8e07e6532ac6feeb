// Package policy is one organisation's last word over what its node
// discloses. Each node reads a policy that only its organisation writes
// (node.yaml's policy_file, or the default): which kinds of job it takes
// part in, with which peers, who may submit them (signed, within a time
// window); per dataset and column, what may leave the node and in what
// form, and to whom, the roles its columns may play and the bounds that
// size noise; floors on the parties in any aggregate and on k and l of any
// publication; a rule against differencing; a differential-privacy budget
// and an allowance of exact releases per dataset; and whether a person
// approves each job. Nothing here is replicated: no other member sees or
// changes it.
//
// # Datasets, not names
//
// Every decision is about the data a spec's table resolves to on this node
// (job.DatasetName: the node's catalogue name for it, else its file's path
// inside tables_dir), never about the name the spec gives: the same file
// under another name keeps its rules, its differencing history and its
// budget, and one dataset twice in a job is refused.
//
// # Vocabulary
//
// A form is one of the disclosure kinds the audit ledger records for every
// message (wire.Disclosure), so the ledger and the policy speak one
// language: psi-blinded (a join key into a private set intersection),
// ciphertext (values or counts encrypted into a secure aggregate whose
// total is published; a job admitted for it may also secret-share them
// into a computation whose only output is public, quantile's brackets'
// check), class-summary (class counts per join value),
// split-summary (how counts divide at a split), score (a candidate split's
// gain), split-attribute (a column that may split a tree node, its
// predicate kept at home; boost's lattice path also tells every member how
// many bins the node's widest such column has), generalised (published in a k-anonymous table),
// membership (a result names which of the node's rows belong to a group),
// synthetic (a sample drawn from a density estimated on the rows, each
// class's row count kept), sanitised-log (a query log with per-site ids
// for its URLs, no ranks, and no two queries sharing a clicked site),
// anonymised-graph (a graph's nodes under pseudonyms in classes of at
// least k, its sensitive edge type removed, the rest released by one of
// five strategies), distance (a column compared id by id with one other
// party's under an ElGamal key, only the count of differing ids coming
// out), secret-share (a Shamir share of a count inside a multiparty
// computation among the job's parties, package mpc), local-aggregate (a
// local aggregate in clear) and raw (values as they are). Kinds declare, per job and party, which columns leave in which form
// and to whom (job.Use); the policy grants forms per column, by the
// column's role in the job (key, id, attribute, class, sensitive) unless a
// dataset's own rules say otherwise, and the role the organisation gave a
// column (tables.D.roles) binds the job.
//
// # Where it is enforced
//
// The runtime (package job/runner) asks Admit before a job's session opens
// or a row is read, and again at every step (a reloaded policy takes effect
// at once); a refusal names the node and the rule, never a value. While the
// job runs, every message leaving the node passes Guard.Send (its
// disclosure must be one the job was admitted for, its recipient a peer
// the policy allows, a ciphertext, a decryption share or a secret share only for a step
// with enough parties; a share records its step's total formed). Every
// aggregation goes through secureagg.Contribute, which asks
// Guard.Aggregate with the step's real party set and row counts (noise
// counts only as the owner's bounds size it; no aggregate of a column may
// leave out a party of a total of it this job already formed), then
// Guard.Spend before noise is drawn, and tells Guard.Formed when the party
// saw the total formed. Kinds ask Guard.Release before an exact pooled
// value is published and Guard.Publish before a column leaves value by
// value. Decisions, aggregates, formed totals, spending, releases and
// submission nonces are kept in the node's data dir, so they survive
// restarts.
//
// What the policy cannot do: results themselves can still be combined
// outside it. The floors and the differencing rule make the cheapest
// attacks (an aggregate of two, an aggregate that differs by one party or a
// few rows from an earlier one) fail at this node; the budget bounds what
// noised results reveal in total. docs/security.md says what they buy.
package policy
