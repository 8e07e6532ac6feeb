package lattice

import (
	"errors"
	"testing"
)

// Key generation refuses what would give a wrong key: a non-member, shares
// of another session, a member folded in twice, a fold missing a member,
// secret shares meant for another member, an impossible quorum.
func TestKeyGenRefuses(t *testing.T) {
	p := params(t)
	members := names(3)
	kg, err := NewKeyGen(p, members, 2, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	other, err := NewKeyGen(p, members, 2, []byte("b"))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := kg.GenShares("stranger"); !errors.Is(err, ErrMismatch) {
		t.Fatalf("non-member: %v", err)
	}
	pubs := make([]*PublicKeyShare, 3)
	secs := make([][]*SecretShare, 3)
	for i, m := range members {
		if pubs[i], secs[i], err = kg.GenShares(m); err != nil {
			t.Fatal(err)
		}
	}
	foreign, _, err := other.GenShares(members[1])
	if err != nil {
		t.Fatal(err)
	}
	acc := kg.AllocatePublicShare()
	if err := kg.AggregatePublic(pubs[0], foreign, acc); !errors.Is(err, ErrMismatch) {
		t.Fatalf("share of another session: %v", err)
	}
	if err := kg.AggregatePublic(pubs[0], pubs[0], acc); !errors.Is(err, ErrMismatch) {
		t.Fatalf("member twice: %v", err)
	}
	if err := kg.AggregatePublic(pubs[0], pubs[1], acc); err != nil {
		t.Fatal(err)
	}
	sec := kg.AllocateSecretShare()
	if err := kg.AggregateSecret(secs[0][0], secs[1][1], sec); !errors.Is(err, ErrMismatch) {
		t.Fatalf("secret shares for two members: %v", err)
	}
	if err := kg.AggregateSecret(secs[0][0], secs[1][0], sec); err != nil {
		t.Fatal(err)
	}
	if _, err := kg.Finalise(members[0], acc, sec); !errors.Is(err, ErrMismatch) {
		t.Fatalf("fold missing a member: %v", err)
	}
	if err := kg.AggregatePublic(acc, pubs[2], acc); err != nil {
		t.Fatal(err)
	}
	if err := kg.AggregateSecret(sec, secs[2][0], sec); err != nil {
		t.Fatal(err)
	}
	if _, err := kg.Finalise(members[1], acc, sec); !errors.Is(err, ErrMismatch) {
		t.Fatalf("secret shares of member 1 finalised by member 2: %v", err)
	}
	if _, err := kg.Finalise(members[0], acc, sec); err != nil {
		t.Fatal(err)
	}
	for _, q := range []int{0, 1, 4} {
		if _, err := NewKeyGen(p, members, q, nil); !errors.Is(err, ErrParams) {
			t.Fatalf("quorum %d: %v", q, err)
		}
	}
	if _, err := NewKeyGen(p, []string{"b", "a"}, 1, nil); !errors.Is(err, ErrParams) {
		t.Fatalf("unsorted members: %v", err)
	}
}

// Every member derives the same public key and key id, and the default
// quorum is an honest majority (two members: both).
func TestKeyGenAgrees(t *testing.T) {
	for _, n := range []int{1, 2, 3, 5} {
		keys := testKeys(t, n, DefaultQuorum(n))
		for _, k := range keys[1:] {
			if k.ID() != keys[0].ID() {
				t.Fatalf("N=%d: members derived different keys", n)
			}
		}
	}
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 2, 5: 3, 17: 9} {
		if got := DefaultQuorum(n); got != want {
			t.Fatalf("DefaultQuorum(%d) = %d, want %d", n, got, want)
		}
	}
}
