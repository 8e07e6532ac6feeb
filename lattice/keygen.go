package lattice

import (
	"fmt"
	"slices"

	"github.com/tuneinsight/lattigo/v6/core/rlwe"
	"github.com/tuneinsight/lattigo/v6/multiparty"
	"github.com/tuneinsight/lattigo/v6/ring"
	"github.com/tuneinsight/lattigo/v6/ring/ringqp"
	"github.com/tuneinsight/lattigo/v6/utils/sampling"
)

// KeyGen is the dealerless generation of a collective key with a
// Quorum-of-N threshold access structure, in one round:
//
//   - every member i draws a ternary secret s_i and sends
//     (a) its collective-public-key share p_i = −a·s_i + e_i (the CKG
//     protocol of Mouchet, Troncoso-Pastoriza, Bossuat and Hubaux,
//     "Multiparty Homomorphic Encryption from Ring-Learning-with-Errors",
//     PETS 2021), public, to whoever folds them, and (b) to every member j,
//     privately, f_i(j), where f_i is a random polynomial of degree
//     Quorum−1 with f_i(0) = s_i (the "Thresholdize" operation of Mouchet,
//     Bertrand and Hubaux, "An Efficient Threshold Access-Structure for
//     RLWE-Based Multiparty Homomorphic Encryption", 2022);
//   - the public shares are folded (AggregatePublic) into Σp_i, which with
//     the common a is the public key of s = Σs_i; member j folds the N
//     secret shares addressed to it (AggregateSecret) into Σ_i f_i(j), its
//     Shamir share of s; Finalise checks that all N contributed and returns
//     the member's Keys.
//
// a is read from a common reference string every member derives from the
// parameter set, the members, the quorum and a public nonce (package
// keygen's joint seed, which every member contributes to by commit and
// reveal, so that no one member chooses a), so no message carries it. Like Lattigo's multiparty
// package, the protocol is secure against passive adversaries only: a
// member that sends inconsistent shares is not caught here but makes every
// later decryption fail its checks (see Verdict).
//
// KeyGen holds only public parameters; a member's secret lives in GenShares
// and is gone when it returns. No method sends anything.
type KeyGen struct {
	params  Params
	members []string
	quorum  int
	session Digest
	ckg     multiparty.PublicKeyGenProtocol
	thr     multiparty.Thresholdizer
	crp     multiparty.PublicKeyGenCRP
}

// NewKeyGen sets up a key generation over sorted members with the given
// quorum. nonce makes the common reference string fresh (a public seed no
// single member chose: keygen's joint seed).
func NewKeyGen(params Params, members []string, quorum int, nonce []byte) (*KeyGen, error) {
	pk, err := newPublicKey(params, members, quorum, rlwe.NewPublicKey(params.bgv))
	if err != nil {
		return nil, err
	}
	h := newHasher("cohort/mhe/keygen-session/1")
	h.roster(params, quorum, members)
	h.bytes(nonce)
	kg := &KeyGen{params: params, members: pk.Members, quorum: quorum, session: h.sum()}
	err = safely(func() error {
		crs, err := sampling.NewKeyedPRNG(kg.session[:])
		if err != nil {
			return err
		}
		kg.ckg = multiparty.NewPublicKeyGenProtocol(params.bgv)
		kg.thr = multiparty.NewThresholdizer(params.bgv)
		kg.crp = kg.ckg.SampleCRP(crs)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return kg, nil
}

// PublicKeyShare is a share of the collective public key, or a fold of
// several: Σ_{i∈Parties} (−a·s_i + e_i). It is public.
type PublicKeyShare struct {
	Session Digest
	Parties []int
	value   ring.Poly
	ps      polyShape
}

// SecretShare is Σ_{i∈Parties} f_i(To): the part of member To's threshold
// secret that members Parties sent it. It is secret to To: send it only over
// a confidential channel to To.
type SecretShare struct {
	Session Digest
	To      int
	Parties []int
	value   ring.Poly
	ps      polyShape
}

// AllocatePublicShare allocates a public-key share to unmarshal into.
func (kg *KeyGen) AllocatePublicShare() *PublicKeyShare {
	s := kg.params.polyShape()
	return &PublicKeyShare{value: s.newPoly(), ps: s}
}

// AllocateSecretShare allocates a secret share to unmarshal into.
func (kg *KeyGen) AllocateSecretShare() *SecretShare {
	s := kg.params.polyShape()
	return &SecretShare{value: s.newPoly(), ps: s}
}

// GenShares is member self's one round: its public-key share and its secret
// shares, out[j-1] for member j (out[self-1] is its own, kept locally).
func (kg *KeyGen) GenShares(self string) (*PublicKeyShare, []*SecretShare, error) {
	point, ok := slices.BinarySearch(kg.members, self)
	if !ok {
		return nil, nil, fmt.Errorf("%w: %.64q is not a member", ErrMismatch, self)
	}
	point++
	pub := kg.AllocatePublicShare()
	pub.Session, pub.Parties = kg.session, []int{point}
	secrets := make([]*SecretShare, len(kg.members))
	err := safely(func() error {
		sk := rlwe.NewKeyGenerator(kg.params.bgv).GenSecretKeyNew()
		share := multiparty.PublicKeyGenShare{Value: ringqp.Poly{Q: pub.value}}
		kg.ckg.GenShare(sk, kg.crp, &share)
		reduce(kg.params.bgv.RingQ(), pub.value)
		poly, err := kg.thr.GenShamirPolynomial(kg.quorum, sk)
		if err != nil {
			return err
		}
		for j := range secrets {
			s := kg.AllocateSecretShare()
			s.Session, s.To, s.Parties = kg.session, j+1, []int{point}
			out := multiparty.ShamirSecretShare{Poly: ringqp.Poly{Q: s.value}}
			kg.thr.GenShamirSecretShare(multiparty.ShamirPublicPoint(j+1), poly, &out)
			reduce(kg.params.bgv.RingQ(), s.value)
			secrets[j] = s
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return pub, secrets, nil
}

// AggregatePublic folds two public-key shares of disjoint members into out
// (which may be a or b), in any order.
func (kg *KeyGen) AggregatePublic(a, b, out *PublicKeyShare) error {
	ps, err := kg.fold(a.Session, b.Session, a.Parties, b.Parties, a.value, b.value, out.value)
	if err != nil {
		return err
	}
	out.Session, out.Parties, out.ps = kg.session, ps, kg.params.polyShape()
	return nil
}

// AggregateSecret folds two secret shares for the same recipient from
// disjoint members into out (which may be a or b), in any order.
func (kg *KeyGen) AggregateSecret(a, b, out *SecretShare) error {
	if a.To != b.To {
		return fmt.Errorf("%w: secret shares for members %d and %d", ErrMismatch, a.To, b.To)
	}
	ps, err := kg.fold(a.Session, b.Session, a.Parties, b.Parties, a.value, b.value, out.value)
	if err != nil {
		return err
	}
	out.Session, out.To, out.Parties, out.ps = kg.session, a.To, ps, kg.params.polyShape()
	return nil
}

// fold checks two shares' sessions, merges their disjoint parties and sets
// out = a + b.
func (kg *KeyGen) fold(sa, sb Digest, pa, pb []int, a, b, out ring.Poly) ([]int, error) {
	if sa != kg.session || sb != kg.session {
		return nil, fmt.Errorf("%w: key-generation share of another session", ErrMismatch)
	}
	ps := append(slices.Clone(pa), pb...)
	slices.Sort(ps)
	if err := checkParties(ps, len(kg.members)); err != nil {
		return nil, fmt.Errorf("%w: shares overlap or name non-members", ErrMismatch)
	}
	if err := kg.params.polyShape().checkPolys([]ring.Poly{a, b, out}); err != nil {
		return nil, err
	}
	kg.params.bgv.RingQ().Add(a, b, out)
	return ps, nil
}

// Finalise returns member self's Keys from the fold of every member's
// public-key share and the fold of every member's secret share for self.
func (kg *KeyGen) Finalise(self string, pub *PublicKeyShare, sec *SecretShare) (*Keys, error) {
	point := slices.Index(kg.members, self) + 1
	all := make([]int, len(kg.members))
	for i := range all {
		all[i] = i + 1
	}
	switch {
	case point == 0:
		return nil, fmt.Errorf("%w: %.64q is not a member", ErrMismatch, self)
	case pub.Session != kg.session || sec.Session != kg.session:
		return nil, fmt.Errorf("%w: key-generation share of another session", ErrMismatch)
	case !slices.Equal(pub.Parties, all) || !slices.Equal(sec.Parties, all):
		return nil, fmt.Errorf("%w: every member must contribute to both folds", ErrMismatch)
	case sec.To != point:
		return nil, fmt.Errorf("%w: the secret shares are for member %d, not %d", ErrMismatch, sec.To, point)
	}
	key := rlwe.NewPublicKey(kg.params.bgv)
	kg.ckg.GenPublicKey(multiparty.PublicKeyGenShare{Value: ringqp.Poly{Q: pub.value}}, kg.crp, key)
	pk, err := newPublicKey(kg.params, kg.members, kg.quorum, key)
	if err != nil {
		return nil, err
	}
	share := multiparty.ShamirSecretShare{Poly: kg.params.bgv.RingQP().NewPoly()}
	share.Q.Copy(sec.value)
	return &Keys{PublicKey: pk, Self: point, share: share}, nil
}

type keygenShareWire struct {
	Session []byte `msgpack:"session"`
	To      int    `msgpack:"to"`
	Parties []int  `msgpack:"parties"`
}

func marshalKeygenShare(session Digest, to int, parties []int, value ring.Poly) ([]byte, error) {
	return frame(keygenShareWire{Session: session[:], To: to, Parties: parties}, []ring.Poly{value})
}

func unmarshalKeygenShare(b []byte, s polyShape) (session Digest, to int, parties []int, value ring.Poly, err error) {
	var w keygenShareWire
	raw, err := unframe(b, &w)
	if err != nil {
		return session, 0, nil, value, fmt.Errorf("key-generation share: %w", err)
	}
	if len(w.Session) != len(session) || len(w.Parties) == 0 || w.To < 0 || w.To > MaxMembers {
		return session, 0, nil, value, fmt.Errorf("%w: key-generation share header", ErrMalformed)
	}
	copy(session[:], w.Session)
	if err = checkParties(w.Parties, MaxMembers); err != nil {
		return session, 0, nil, value, err
	}
	polys, err := s.decodePolys(raw, 1)
	if err != nil {
		return session, 0, nil, value, err
	}
	return session, w.To, w.Parties, polys[0], nil
}

// MarshalBinary encodes the share.
func (s *PublicKeyShare) MarshalBinary() ([]byte, error) {
	return marshalKeygenShare(s.Session, 0, s.Parties, s.value)
}

// UnmarshalBinary decodes into a share from AllocatePublicShare.
func (s *PublicKeyShare) UnmarshalBinary(b []byte) error {
	session, to, parties, value, err := unmarshalKeygenShare(b, s.ps)
	if err != nil {
		return err
	}
	if to != 0 {
		return fmt.Errorf("%w: a public-key share has no recipient", ErrMalformed)
	}
	s.Session, s.Parties, s.value = session, parties, value
	return nil
}

// MarshalBinary encodes the share.
func (s *SecretShare) MarshalBinary() ([]byte, error) {
	return marshalKeygenShare(s.Session, s.To, s.Parties, s.value)
}

// UnmarshalBinary decodes into a share from AllocateSecretShare.
func (s *SecretShare) UnmarshalBinary(b []byte) error {
	session, to, parties, value, err := unmarshalKeygenShare(b, s.ps)
	if err != nil {
		return err
	}
	if to < 1 {
		return fmt.Errorf("%w: a secret share needs a recipient", ErrMalformed)
	}
	s.Session, s.To, s.Parties, s.value = session, to, parties, value
	return nil
}
