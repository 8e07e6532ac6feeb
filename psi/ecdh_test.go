package psi

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"testing"
)

// TestVectors checks HashBlind and DoubleBlind against testdata/vectors.json
// (regression vectors; see its "source"), and that blinding commutes.
func TestVectors(t *testing.T) {
	t.Parallel()
	raw, err := os.ReadFile("testdata/vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		DstArgs struct {
			Job, Phase, Channel, Edge string
			Round                     int
		} `json:"dst_args"`
		Dst     string `json:"dst"`
		SecretA string `json:"secret_a"`
		SecretB string `json:"secret_b"`
		Vectors []struct {
			Element string `json:"element_hex"`
			BlindA  string `json:"blind_a"`
			BlindAB string `json:"blind_ab"`
		} `json:"vectors"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatal(err)
	}
	d := f.DstArgs
	dst := DomainTag(d.Job, d.Phase, d.Round, d.Channel, d.Edge)
	if string(dst) != f.Dst {
		t.Fatalf("domain tag %q, want %q", dst, f.Dst)
	}
	a, b := secretFromBytes([]byte(f.SecretA)), secretFromBytes([]byte(f.SecretB))
	if len(f.Vectors) == 0 {
		t.Fatal("no vectors")
	}
	for _, v := range f.Vectors {
		e, err := hex.DecodeString(v.Element)
		if err != nil {
			t.Fatal(err)
		}
		ya := HashBlind([][]byte{e}, dst, a)
		if got := hex.EncodeToString(ya[0][:]); got != v.BlindA {
			t.Errorf("H(%x)^a = %s, want %s", e, got, v.BlindA)
		}
		yab, err := DoubleBlind(ya, b)
		if err != nil {
			t.Fatal(err)
		}
		if got := hex.EncodeToString(yab[0][:]); got != v.BlindAB {
			t.Errorf("H(%x)^ab = %s, want %s", e, got, v.BlindAB)
		}
		yba, err := DoubleBlind(HashBlind([][]byte{e}, dst, b), a)
		if err != nil {
			t.Fatal(err)
		}
		if yba[0] != yab[0] {
			t.Errorf("H(%x): (H^b)^a ≠ (H^a)^b", e)
		}
	}
}

// TestDomainSeparation: the same element under another job or edge, or
// the same element with another secret, blinds to something else.
func TestDomainSeparation(t *testing.T) {
	t.Parallel()
	s := secretFromBytes([]byte("s"))
	e := [][]byte{[]byte("42")}
	base := HashBlind(e, DomainTag("j", "p", 0, "", "e"), s)[0]
	for name, dst := range map[string][]byte{
		"job":     DomainTag("j2", "p", 0, "", "e"),
		"phase":   DomainTag("j", "p2", 0, "", "e"),
		"round":   DomainTag("j", "p", 1, "", "e"),
		"channel": DomainTag("j", "p", 0, "c", "e"),
		"edge":    DomainTag("j", "p", 0, "", "e2"),
		// Length prefixes: moving a byte between fields changes the tag.
		"shift": DomainTag("jp", "", 0, "", "e"),
	} {
		if HashBlind(e, dst, s)[0] == base {
			t.Errorf("changing the %s does not change the blinded value", name)
		}
	}
	if HashBlind(e, DomainTag("j", "p", 0, "", "e"), secretFromBytes([]byte("t")))[0] == base {
		t.Error("another secret gives the same blinded value")
	}
	if NewSecret().k.IsEqual(NewSecret().k) {
		t.Error("two fresh secrets are equal")
	}
}

// invalidEncodings are RFC 9496 Appendix A.2's invalid ristretto255
// encodings (https://www.rfc-editor.org/rfc/rfc9496#appendix-A.2), plus
// bit 255 set on a valid encoding.
var invalidEncodings = []string{
	// Non-canonical field encodings.
	"00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
	"ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"f3ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	// Negative field elements.
	"0100000000000000000000000000000000000000000000000000000000000000",
	"01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	"ed57ffd8c914fb201471d1c3d245ce3c746fcbe63a3679d51b6a516ebebe0e20",
	"c34c4e1826e5d403b78e246e88aa051c36ccf0aafebffe137d148a2bf9104562",
	"c940e5a4404157cfb1628b108db051a8d439e1a421394ec4ebccb9ec92a8ac78",
	"47cfc5497c53dc8e61c91d17fd626ffb1c49e2bca94eed052281b510b1117a24",
	"f1c6165d33367351b0da8f6e4511010c68174a03b6581212c71c0e1d026c3c72",
	"87260f7a2f12495118360f02c26a470f450dadf34a413d21042b43b9d93e1309",
	// Non-square x^2.
	"26948d35ca62e643e26a83177332e6b6afeb9d08e4268b650f1f5bbd8d81d371",
	"4eac077a713c57b4f4397629a4145982c661f48044dd3f96427d40b147d9742f",
	"de6a7b00deadc788eb6b6c8d20c0ae96c2f2019078fa604fee5b87d6e989ad7b",
	"bcab477be20861e01e4a0e295284146a510150d9817763caf1a6f4b422d67042",
	"2a292df7e32cababbd9de088d1d1abec9fc0440f637ed2fba145094dc14bea08",
	"f4a9e534fc0d216c44b218fa0c42d99635a0127ee2e53c712f70609649fdff22",
	"8268436f8c4126196cf64b3c7ddbda90746a378625f9813dd9b8457077256731",
	"2810e5cbc2cc4d4eece54f61c6f69758e289aa7ab440b3cbeaa21995c2f4232b",
	// Negative xy value.
	"3eb858e78f5a7254d8c9731174a94f76755fd3941c0ac93735c07ba14579630e",
	"a45fdc55c76448c049a1ab33f17023edfb2be3581e9c7aade8a6125215e04220",
	"d483fe813c6ba647ebbfd3ec41adca1c6130c2beeee9d9bf065c8d151c5f396e",
	"8a2e1d30050198c65a54483123960ccc38aef6848e1ec8f5f780e8523769ba32",
	"32888462f8b486c68ad7dd9610be5192bbeaf3b443951ac1a8118419d9fa097b",
	"227142501b9d4355ccba290404bde41575b037693cef1f438c47f8fbf35d1165",
	"5c37cc491da847cfeb9281d407efc41e15144c876e0170b499a96a22ed31e01e",
	"445425117cb8c90edcbc7c1cc0e74f747f2c1efa5630a967c64f287792a48a4b",
	// s = -1, which causes y = 0.
	"ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
	// The base point (RFC 9496 A.1) with bit 255 set.
	"e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2df6",
}

// TestDoubleBlindRejects: every invalid encoding of RFC 9496 A.2, and the
// identity, is ErrPeer naming its position; a valid point next to it does
// not hide it.
func TestDoubleBlindRejects(t *testing.T) {
	t.Parallel()
	s := NewSecret()
	valid := HashBlind([][]byte{[]byte("x")}, []byte("t"), s)[0]
	bad := append(slices.Clone(invalidEncodings), "0000000000000000000000000000000000000000000000000000000000000000")
	for _, h := range bad {
		var p Point
		b, err := hex.DecodeString(h)
		if err != nil || len(b) != PointLen {
			t.Fatalf("bad test vector %s", h)
		}
		copy(p[:], b)
		if _, err := DoubleBlind([]Point{valid, p}, s); !errors.Is(err, ErrPeer) {
			t.Errorf("DoubleBlind accepted invalid encoding %s: %v", h, err)
		}
	}
	// canonicalField alone rejects the non-canonical field encodings and
	// bit 255, whatever the backend does.
	for _, i := range []int{0, 1, 2, 3, len(invalidEncodings) - 1} {
		var p Point
		b, _ := hex.DecodeString(invalidEncodings[i])
		copy(p[:], b)
		if canonicalField(&p) {
			t.Errorf("canonicalField accepts %s", invalidEncodings[i])
		}
	}
	// And it does not reject valid points: the base point and its small multiples (RFC 9496 A.1).
	for _, h := range []string{
		"e2f2ae0a6abc4e71a884a961c500515f58e30b6aa582dd8db6a65945e08d2d76",
		"6a493210f7499cd17fecb510ae0cea23a110e8d5b901f8acadd3095c73a3b919",
	} {
		var p Point
		b, _ := hex.DecodeString(h)
		copy(p[:], b)
		if _, err := DoubleBlind([]Point{p}, s); err != nil {
			t.Errorf("DoubleBlind rejected the valid point %s: %v", h, err)
		}
	}
}

// TestCanonicalFieldBoundary checks canonicalField at s = p − 1, p, p + 1.
func TestCanonicalFieldBoundary(t *testing.T) {
	t.Parallel()
	var p Point
	for i := range p {
		p[i] = 0xff
	}
	p[31] = 0x7f
	for low, want := range map[byte]bool{0xec: true, 0xed: false, 0xee: false, 0x00: true} {
		p[0] = low
		if got := canonicalField(&p); got != want {
			t.Errorf("canonicalField(s with low byte %#x) = %v, want %v", low, got, want)
		}
	}
	p[30] = 0xfe
	p[0] = 0xff
	if !canonicalField(&p) {
		t.Error("s < p with a low byte of 0xff rejected")
	}
}

func TestMatch(t *testing.T) {
	t.Parallel()
	pt := func(b byte) Point { var p Point; p[0] = b; return p }
	mine := []Point{pt(1), pt(2), pt(3), pt(4)}
	theirs := []Point{pt(4), pt(9), pt(2)}
	if got := Match(mine, theirs); !slices.Equal(got, []int{1, 3}) {
		t.Errorf("Match = %v, want [1 3]", got)
	}
	if got := Match(nil, theirs); len(got) != 0 {
		t.Errorf("Match(nil, …) = %v", got)
	}
}

func TestPermutation(t *testing.T) {
	t.Parallel()
	p := permutation(1000)
	s := slices.Clone(p)
	slices.Sort(s)
	for i, v := range s {
		if v != i {
			t.Fatalf("not a permutation: %v", s[:10])
		}
	}
	if slices.Equal(p, permutation(1000)) {
		t.Error("two permutations of 1000 are equal")
	}
}
