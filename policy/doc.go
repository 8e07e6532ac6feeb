// Package policy is one organisation's last word over what its node
// discloses. Each node reads a policy that only its organisation writes
// (node.yaml's policy_file, or the default): which kinds of job it takes
// part in, with which peers, who may submit them; per table and column,
// what may leave the node and in what form, and to whom; floors on the
// parties in any aggregate and on k and l of any publication; a rule
// against differencing; a differential-privacy budget per column; and
// whether a person approves each job. Nothing here is replicated: no other
// member sees or changes it.
//
// # Vocabulary
//
// A form is one of the disclosure kinds the audit ledger records for every
// message (protocol.Disclosure), so the ledger and the policy speak one
// language: psi-blinded (a join key into a private set intersection),
// ciphertext (values or counts encrypted into a secure aggregate whose
// total is published), class-summary (class counts per join value),
// split-summary (how counts divide at a split), score (a candidate split's
// gain), split-attribute (a column that may split a tree node, its
// predicate kept at home), generalised (published in a k-anonymous table),
// membership (a result names which of the node's rows belong to a group),
// local-aggregate (a local aggregate in clear) and raw (values as they
// are). Kinds declare, per job and party, which columns leave in which form
// and to whom (job.Use); the policy grants forms per column, by the
// column's role in the job (key, id, attribute, class, sensitive) unless a
// table's own rules say otherwise.
//
// # Where it is enforced
//
// The runtime (package job/runner) asks Admit before a job's session opens
// or a row is read, and again at every step (a reloaded policy takes effect
// at once); a refusal names the node and the rule, never a value. While the
// job runs, every message leaving the node passes Guard.Send (its
// disclosure must be one the job was admitted for, its recipient a peer
// the policy allows, a decryption share only for a step with enough
// parties), and kinds ask Guard.Aggregate before a party's data enters an
// aggregate and Guard.Spend before noise is drawn. Decisions, aggregates
// and spending are kept in the node's data dir, so they survive restarts.
//
// What the policy cannot do: results themselves can still be combined
// outside it. The floors and the differencing rule make the cheapest
// attacks (an aggregate of two, an aggregate that differs by one party or a
// few rows from an earlier one) fail at this node; the budget bounds what
// noised results reveal in total. docs/security.md says what they buy.
package policy
