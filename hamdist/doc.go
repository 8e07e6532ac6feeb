// Package hamdist is Zhiqiang Yang, Sheng Zhong and Rebecca N. Wright's
// two-party protocols for the private Hamming distance and the private
// generalised Hamming distance ("Towards Privacy-Preserving Model
// Selection", PinKDD 2007, LNCS 4890, §4.1 Fig. 1 and §4.2 Fig. 2), which
// the kinds hamming and model-select run, and the alignment and exchange
// those kinds share. The protocol types do no I/O: Encrypt, Compare and
// CountOnes (Fig. 2), EncryptBits, FlipBits and CountInverse (Fig. 1) are
// pure; RunHolder and RunComparer carry them over a Network.
//
// # Scheme
//
// ElGamal as the paper's §3.2 gives it, in a prime-order group where DDH
// is assumed: ristretto255 (RFC 9496, through cloudflare/circl, as package
// psi uses it) instead of the paper's quadratic residues mod a safe prime
// with 1024-bit keys. ristretto255 gives about 126-bit security for 32-byte
// elements (a 1024-bit modulus about 80 bits) and needs no parameter
// generation. The key holder (the paper's Alice) draws a fresh key pair for
// every run from crypto/rand; the key never leaves it.
//
// Fig. 2, generalised to windows: Alice sends E(g^{a_i}); for each
// position i and each value w of its window, Bob returns
// e″ = (E(g^w)/e_i)^r, r uniform in [1, ℓ−1], with fresh randomness, all
// n·W of them in a random order; Alice counts the decryptions equal to 1.
// The window of the paper's generalised distance is {b_i}; for numbers
// with a threshold t it is b_i−t … b_i+t, so a position counts as equal
// iff |a_i − b_i| ≤ t (one 1 at most per position, since the window's
// values are distinct). The printed correctness derivation of Fig. 2 omits
// r_i; with it, an unequal position decrypts to a uniform element ≠ 1,
// which is what hides the difference.
//
// # Why the kinds run Fig. 2 for binary columns too
//
// Fig. 1 (binary: E(g) for 0, E(g^{−1}) for 1; Bob inverts where b_i = 1)
// costs Bob half as much, but it is private only while Alice encrypts g or
// g^{−1}: a key holder that encrypts distinct chosen values g^{s_i} reads
// each b_i off the decryptions, permutation or not (TestHostileHolder).
// Under Fig. 2 whatever Alice encrypts, each decryption is 1 or uniform,
// so she learns only how many positions meet her (chosen) inputs, which
// choosing inputs gives anyway. Fig. 1 is kept for the paper's figures.
//
// # Leakage profile (of one exchange)
//
// Semi-honest parties; DDH in ristretto255; HashValue's hash to scalars
// modelled as a random function.
//
//   - The comparer (Bob) receives n ciphertexts under a key it does not
//     hold: it learns n (the announced length) and nothing else.
//   - The key holder (Alice) receives n·W ciphertexts in a uniformly random
//     order that decrypt to 1 or to uniform elements: it learns the count of
//     positions that meet, and nothing about which, nor by how much the
//     others differ (Theorems 1 and 2's simulators).
//   - A deviating comparer can make the count anything it likes (nothing
//     proves its work), and can compare Alice's positions with each other
//     (e_i/e_j): the count it makes her publish can then tell it whether
//     two of her values are equal. The kinds' profiles assume semi-honest
//     parties, as the paper does.
//
// # Not checked, not constant time
//
// Peer bytes are decoded strictly (DecodeKey, DecodeChunk: canonical
// encodings only, the identity refused as a key, exact lengths and the
// run's key on every chunk, so a message of an earlier run is refused as
// ErrRestarted, never decrypted under a new key). Nothing proves that a
// ciphertext encrypts what the protocol says. The group arithmetic is
// circl's (over bwesterb/go-ristretto), and this package adds no
// constant-time promise to it: the counting branches on decryptions, and
// ExactValues and IntValues read values with ordinary Go code.
package hamdist
