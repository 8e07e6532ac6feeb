// Package hamming is `kind: hamming`: two parties, each with a column over
// the same ids (or the same row positions), learn, and the consortium with
// them, how many ids their values differ at (the Hamming distance), or for
// numbers how many differ by more than a threshold (a generalised Hamming
// distance), by Zhiqiang Yang, Sheng Zhong and Rebecca N. Wright's ElGamal
// protocol ("Towards Privacy-Preserving Model Selection", PinKDD 2007, §4.2
// Fig. 2), as package hamdist implements it.
//
// # Spec
//
//	kind: hamming
//	parties: [{name: north, tables: [{name: A, path: a.csv}]},
//	          {name: south, tables: [{name: B, path: b.csv}]}]
//	schema: {A: {patient: id, diagnosis: categorical}, B: {patient: id, diagnosis: categorical}}
//	params: {keyholder: north, threshold: 0, align: psi, min_ids: 10}
//
// Each table has its id column (align psi) and one compared column; both
// numeric, or both text (categorical or class). threshold > 0 compares
// integers (|a − b| > t counts). result.json holds distance, compared (the
// ids in both tables), threshold, keyholder and align.
//
// # Rounds
//
// One step, distance round 0, with both parties: each loads its table,
// aligns it (align psi: package psi's ECDH intersection of the id columns
// on the step's channel "align", the key holder as receiver; both sort the
// shared ids by their encoding, so position i is one id at both; align
// position: every row in table order), then they run hamdist's exchange on
// channel "compare". The key holder's output is how many ids meet; the
// coordinator checks that both compared as many ids and commits
// {compared, distance}.
//
// # Why ElGamal and not the consortium's threshold Paillier key
//
// The paper's protocol counts decryptions one by one: the key holder must
// decrypt n ciphertexts. With the consortium's threshold key every
// decryption would take a share, with its proof, from t+1 members, for
// every id, and would hand the per-id equalities to whoever combined the
// shares. A linear variant (a XOR b = a + b − 2ab, summed under Paillier
// and decrypted once) would be cheaper in decryptions but is not the
// paper's protocol, needs a one-hot encoding per value for anything but
// bits, and a 2048-bit Paillier encryption per id is a 4096-bit modular
// exponentiation against an ElGamal encryption's three 253-bit scalar
// multiplications. So each run draws its own ElGamal key at the key
// holder, as the paper does, on ristretto255 (package hamdist); no
// consortium key is needed, and a two-party job does not touch the
// threshold key's min_parties floor, whose purpose (a total less one's own
// input) does not arise: nothing is summed across parties.
//
// # Leakage profile
//
// Semi-honest parties, DDH in ristretto255 (hamdist's profile).
//
//   - Both parties (align psi) learn which of their ids the other holds
//     (psi's profile) and so how many ids are compared; align position:
//     each other's row count.
//   - The key holder learns the distance before the others (it reports it
//     to the coordinator); from the exchange itself nothing else: not which
//     ids differ, nor by how much.
//   - The other party learns nothing from the exchange (ciphertexts under a
//     key it does not hold).
//   - The coordinator receives the two parties' outputs: how many ids each
//     compared, and from the key holder how many met. The log, and so every
//     member, holds {compared, distance}.
//   - Messages: psi-blinded (the ids, to the peer only), distance (the
//     ciphertexts, to the peer only), control (the run's public key, the
//     comparer's go-ahead and the holder's receipt), public-result (the outputs). Errors name the
//     table, column and row, never a value. TestLeakage checks all of it
//     over real nodes, with every message, output, committed decision,
//     failure text and node log line.
//
// What the result itself tells is the job's to weigh: a distance over few
// ids says much about each (params.min_ids, default 10, refuses fewer at
// both parties), and every run is one more count of the same columns; no
// node policy counts distances per dataset yet.
//
// A party that deviates is outside this profile: the key holder could
// report a false count (nothing proves it), the comparer could make the
// count anything (hamdist's profile). A coordinator cannot make a party
// compare anything the spec does not name: the step's args are empty, and
// a party refuses any step but distance round 0 and refuses once the log
// holds a distance (TestHostileCoordinator); a member that sends malformed
// ciphertexts fails the job, named, without a panic (TestHostileMember).
package hamming
