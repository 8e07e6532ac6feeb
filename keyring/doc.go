// Package keyring owns the consortium key material a node keeps in its data
// dir: the names of the files, their encodings and how they are read and
// written. Two keys live there, each the consortium's collective key with
// this node's share of its secret:
//
//   - the threshold Paillier key (Paillier): keys/threshold.pub (public key
//     and member list, 0644), keys/threshold.share (this node's share,
//     0600), keys/threshold.info (how it was made, 0644). These names are
//     part of the deployment contract (`cohort keys deal` writes them, the
//     keygen job installs them) and are unchanged from before this package.
//   - the lattice key of package mhe (multiparty BGV): keys/lattice.pub
//     (public key, members, quorum, parameter set), keys/lattice.share
//     (this node's Shamir share of the collective secret, 0600) and
//     keys/lattice.info.
//
// Start with the file names, then Paillier, ReadPaillier and ReadLattice
// (what a job's session calls through its job.Secrets), Save and Load
// (what the CLI and `cohort sim` call on a data dir) and Deal and
// DealLattice (single-operator key set-up: tests, `cohort sim`, `cohort
// keys deal`).
//
// Every write replaces a file whole (a temporary file renamed over it), and
// the share is written before its public file: a crash between the two
// leaves a share that the old public file refuses (its key id differs),
// never a key that decrypts wrongly.
//
// Leakage: nothing here sends anything. The share files are the node's
// decryption capability: they are written 0600 and never leave the data
// dir; error texts name files by their names under the data dir, never by
// a path outside it.
package keyring
