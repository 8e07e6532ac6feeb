package psi

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/table"
)

func mustNum(t testing.TB, s string) Value {
	t.Helper()
	v, err := ParseNumber(s)
	if err != nil {
		t.Fatalf("ParseNumber(%q): %v", s, err)
	}
	return v
}

func mustText(t testing.TB, s string) Value {
	t.Helper()
	v, err := TextValue(s)
	if err != nil {
		t.Fatalf("TextValue(%q): %v", s, err)
	}
	return v
}

func mustKey(t testing.TB, vals ...Value) []byte {
	t.Helper()
	k, err := EncodeKey(vals...)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestParseNumberCanonical pins the canonical forms the package doc promises.
func TestParseNumberCanonical(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"1.5": "15e-1", "1.50": "15e-1", "+1.5": "15e-1", "15e-1": "15e-1", "0.15E1": "15e-1", "001.500": "15e-1",
		"100": "1e2", "1e2": "1e2", "100.0": "1e2", "10": "1e1",
		"0": "0", "-0": "0", "0.000": "0", "0e9": "0", ".0": "0", "0.": "0",
		"-2.50": "-25e-1", "7": "7", ".5": "5e-1", "5.": "5",
		"123456789012345678901234567890": "12345678901234567890123456789e1",
		"0.0001":                         "1e-4", "1e-4": "1e-4",
	} {
		if got := mustNum(t, in).String(); got != want {
			t.Errorf("ParseNumber(%q) = %q, want %q", in, got, want)
		}
	}
	for _, in := range []string{"", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "1,5", " 1", "1 ", "0x10", "1_000",
		"NaN", "Inf", "-inf", "1e5000000", "1e+-3", "1.5e2.0", "١"} {
		if v, err := ParseNumber(in); !errors.Is(err, ErrKey) {
			t.Errorf("ParseNumber(%q) = %q, %v; want ErrKey", in, v, err)
		}
	}
	if IntValue(-120).String() != "-12e1" || IntValue(0).String() != "0" {
		t.Errorf("IntValue: %s %s", IntValue(-120), IntValue(0))
	}
	f, err := FloatValue(0.1)
	if err != nil || f != mustNum(t, "0.1") {
		t.Errorf("FloatValue(0.1) = %v, %v; want the decimal 0.1", f, err)
	}
	if _, err := FloatValue(math.NaN()); !errors.Is(err, ErrKey) {
		t.Errorf("FloatValue(NaN): %v", err)
	}
}

// TestParseNumberAgreesWithRat: two decimals parse to the same Value if
// and only if big.Rat says they are equal.
func TestParseNumberAgreesWithRat(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	gen := func() string {
		var b strings.Builder
		if r.IntN(3) == 0 {
			b.WriteByte("+-"[r.IntN(2)])
		}
		for range r.IntN(4) {
			b.WriteByte("0012"[r.IntN(4)])
		}
		if r.IntN(2) == 0 {
			b.WriteByte('.')
			for range r.IntN(4) {
				b.WriteByte("0012"[r.IntN(4)])
			}
		}
		if b.Len() == 0 || strings.Trim(b.String(), "+-.") == "" {
			b.WriteByte('1')
		}
		if r.IntN(3) == 0 {
			fmt.Fprintf(&b, "e%d", r.IntN(7)-3)
		}
		return b.String()
	}
	for range 20000 {
		a, b := gen(), gen()
		va, errA := ParseNumber(a)
		vb, errB := ParseNumber(b)
		ra, okA := new(big.Rat).SetString(a)
		rb, okB := new(big.Rat).SetString(b)
		if (errA == nil) != okA || (errB == nil) != okB {
			t.Fatalf("validity differs from big.Rat: %q %v %v, %q %v %v", a, errA, okA, b, errB, okB)
		}
		if errA != nil || errB != nil {
			continue
		}
		if (va == vb) != (ra.Cmp(rb) == 0) {
			t.Fatalf("%q → %q and %q → %q, but big.Rat equality is %v", a, va, b, vb, ra.Cmp(rb) == 0)
		}
	}
}

func TestKeyRoundTrip(t *testing.T) {
	t.Parallel()
	keys := [][]Value{
		{mustText(t, "")},
		{mustText(t, "alice"), mustNum(t, "1.50")},
		{mustNum(t, "-3e7"), mustText(t, "ü\x00x"), mustNum(t, "0")},
	}
	for _, k := range keys {
		b := mustKey(t, k...)
		got, err := DecodeKey(b)
		if err != nil {
			t.Fatalf("DecodeKey(%x): %v", b, err)
		}
		if fmt.Sprint(got) != fmt.Sprint(k) || len(got) != len(k) {
			t.Errorf("round trip %v → %v", k, got)
		}
		for i := range got {
			if got[i] != k[i] {
				t.Errorf("value %d: %#v, want %#v", i, got[i], k[i])
			}
		}
	}
	// Non-canonical bytes are refused: a number not in canonical form,
	// trailing bytes, an unknown type, a wrong version.
	good := mustKey(t, mustNum(t, "1.5"))
	for name, b := range map[string][]byte{
		"non-canonical number": append([]byte{1, 1, 2, 0, 0, 0, 3}, "1.5"...),
		"trailing":             append(bytes.Clone(good), 0),
		"unknown type":         append([]byte{1, 1, 9, 0, 0, 0, 1}, "x"...),
		"version":              append([]byte{2}, good[1:]...),
		"no values":            {1, 0},
		"truncated":            good[:len(good)-1],
		"bad utf-8":            {1, 1, 1, 0, 0, 0, 1, 0xff},
	} {
		if _, err := DecodeKey(b); !errors.Is(err, ErrKey) {
			t.Errorf("DecodeKey(%s) = %v, want ErrKey", name, err)
		}
	}
}

// TestKeyNearCollisions: crafted pairs that a naive join (concatenation,
// a separator, untyped values, float parsing) would confuse encode apart,
// and equal keys written differently encode alike.
func TestKeyNearCollisions(t *testing.T) {
	t.Parallel()
	differ := [][2][]Value{
		{{mustText(t, "ab"), mustText(t, "c")}, {mustText(t, "a"), mustText(t, "bc")}},
		{{mustText(t, "a|b")}, {mustText(t, "a"), mustText(t, "b")}},
		{{mustText(t, "a\x00"), mustText(t, "b")}, {mustText(t, "a"), mustText(t, "\x00b")}},
		{{mustText(t, "1")}, {mustNum(t, "1")}},
		{{mustText(t, "1.5")}, {mustText(t, "1.50")}},
		{{mustNum(t, "1")}, {mustNum(t, "1"), mustText(t, "")}},
		{{mustText(t, "")}, {mustText(t, ""), mustText(t, "")}},
		{{mustNum(t, "0.1")}, {mustNum(t, "0.10000000000000001")}}, // one float64
		{{mustNum(t, "12"), mustNum(t, "3")}, {mustNum(t, "1"), mustNum(t, "23")}},
		{{mustNum(t, "1e1")}, {mustNum(t, "11")}},
		{{mustNum(t, "-1")}, {mustNum(t, "1")}},
		{{mustText(t, "é")}, {mustText(t, "e\u0301")}}, // no Unicode normalisation
		{{mustText(t, "A")}, {mustText(t, "a")}},
	}
	for _, p := range differ {
		if bytes.Equal(mustKey(t, p[0]...), mustKey(t, p[1]...)) {
			t.Errorf("%q and %q encode alike", p[0], p[1])
		}
	}
	same := [][2][]Value{
		{{mustNum(t, "1.50"), mustText(t, "x")}, {mustNum(t, "1.5"), mustText(t, "x")}},
		{{mustNum(t, "100")}, {IntValue(100)}},
		{{mustNum(t, "-0")}, {mustNum(t, "0.0")}},
	}
	for _, p := range same {
		if !bytes.Equal(mustKey(t, p[0]...), mustKey(t, p[1]...)) {
			t.Errorf("%q and %q encode differently", p[0], p[1])
		}
	}
	if _, err := EncodeKey(); !errors.Is(err, ErrKey) {
		t.Errorf("EncodeKey() = %v, want ErrKey", err)
	}
	if _, err := EncodeKey(Value{}); !errors.Is(err, ErrKey) {
		t.Errorf("EncodeKey(zero Value) = %v, want ErrKey", err)
	}
}

func TestTableKeys(t *testing.T) {
	t.Parallel()
	csv := "ssn,branch,amount\n 7 ,north,1.50\n007,north,1.5\n8,south,2\n"
	tb, err := table.Read(strings.NewReader(csv), "t.csv", "T", map[string]table.Kind{"ssn": table.Key, "branch": table.Key, "amount": table.Numeric})
	if err != nil {
		t.Fatal(err)
	}
	keys, err := TableKeys(tb, []string{"ssn", "branch", "amount"}, []Type{Number, Text, Number})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(keys[0], keys[1]) || bytes.Equal(keys[0], keys[2]) {
		t.Errorf("rows 1 and 2 must share a key, row 3 not: %x", keys)
	}
	if want := mustKey(t, IntValue(8), mustText(t, "south"), IntValue(2)); !bytes.Equal(keys[2], want) {
		t.Errorf("row 3: %x, want %x", keys[2], want)
	}
	if _, err := TableKeys(tb, []string{"branch"}, []Type{Number}); !errors.Is(err, ErrKey) || !strings.Contains(err.Error(), "row 1 column branch") {
		t.Errorf("a text column read as numbers: %v", err)
	}
	if _, err := TableKeys(tb, []string{"nope"}, []Type{Text}); !errors.Is(err, table.ErrNoColumn) {
		t.Errorf("unknown column: %v", err)
	}
	if _, err := TableKeys(tb, []string{"ssn"}, nil); !errors.Is(err, ErrKey) {
		t.Errorf("types missing: %v", err)
	}
}
