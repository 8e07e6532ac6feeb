package secureagg

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job/jobtest"
	"github.com/cohortdm/cohort/lattice"
	"github.com/cohortdm/cohort/paillier"
)

// fault is what befalls one decryptor's shares in a decryption run by
// hand: lost (the root never gets them) or tampered with on their way.
type fault struct {
	party    string
	lost     bool
	tampered bool
}

// exchangeByHand runs a decryption's share exchange the way the driver
// (exchange.go) does, with every request and share carried in memory: the
// root's opener o plans each round, the sharers answer, every share is
// checked and added, and a decryptor that refuses a request or whose
// share is lost is excluded as one whose share did not come in time.
func exchangeByHand(t *testing.T, o opener, sharers map[string]sharer, f fault) (map[string]string, error) {
	t.Helper()
	r, err := o.first()
	if err != nil {
		return nil, err
	}
	excluded := map[string]string{}
	for r != nil {
		if !r.release {
			if err := o.own(r); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range r.asked {
			sh := sharers[p]
			if r.request != nil {
				ok, err := sh.answer(r.request)
				switch {
				case err != nil: // it refuses: no share comes
					excluded[p] = "no decryption share in time"
					continue
				case ok == r.release:
					t.Fatalf("%s: answered %v to a request with release %v", p, ok, r.release)
				case !ok:
					continue // released
				}
			} else if !sh.unasked() {
				t.Fatalf("%s waits for a request that never comes", p)
			}
			if p == f.party && f.lost {
				excluded[p] = "no decryption share in time"
				continue
			}
			out, due, err := sh.shares()
			if err != nil {
				t.Fatal(err)
			}
			// Each party's clock started when it built its schedule:
			// the same deadline, up to that.
			if d := due.Sub(r.due); d > time.Second || d < -time.Second {
				t.Errorf("%s's shares are due at %v, the root waits until %v", p, due, r.due)
			}
			if why := takeShares(t, o, r, p, out, p == f.party && f.tampered); why != "" {
				excluded[p] = why
			}
		}
		if r, err = o.next(r, excluded); err != nil {
			return excluded, err
		}
	}
	return excluded, nil
}

// takeShares delivers p's shares of round r to the slots the root
// expects them on, each checked, then added.
func takeShares(t *testing.T, o opener, r *shareRound, p string, out []outShare, tamper bool) string {
	t.Helper()
	slots := o.slots(r, p)
	if len(out) != len(slots) {
		t.Fatalf("%s sends %d shares, the root expects %d", p, len(out), len(slots))
	}
	for i, s := range out {
		if s.sub != slots[i].sub {
			t.Fatalf("%s's share %d on channel %q, the root listens on %q", p, i, s.sub, slots[i].sub)
		}
		if tamper { // as tamperShares does on the wire
			for _, b := range s.f {
				j := len(b) - 8
				binary.LittleEndian.PutUint64(b[j:], binary.LittleEndian.Uint64(b[j:])^1)
			}
		}
		data, _ := deliver(t, slots[i].r, s.f)
		add, why := o.check(r, p, i, data)
		if why == "" {
			why = add()
		}
		if why != "" {
			return why
		}
	}
	return ""
}

// decryptByHand decrypts the totals the tree's rounds gave each party,
// by hand, and passes the root's result to every other party, which must
// decode the same outcome.
func decryptByHand[C, T any](t *testing.T, root string, ps map[string]party[C, T], totals map[string]T, f fault) (*Result, map[string]string) {
	t.Helper()
	o := ps[root].b.opening(totals[root])
	sharers := map[string]sharer{}
	for name, p := range ps {
		if name != root {
			sh, err := p.b.sharing(totals[name])
			if err != nil {
				t.Fatal(err)
			}
			sharers[name] = sh
		}
	}
	excluded, err := exchangeByHand(t, o, sharers, f)
	down, res, err := o.result(excluded, err)
	if err != nil {
		t.Fatal(err)
	}
	for name, p := range ps {
		if name == root {
			continue
		}
		data, missing := deliver(t, p.b.reader(TypeResult), down)
		_, out, err := p.b.result(data, missing)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !slices.Equal(out.Sum, res.Sum) || fmt.Sprint(out.Excluded) != fmt.Sprint(res.Excluded) {
			t.Fatalf("%s decodes %v excluding %v, the root %v excluding %v", name, out.Sum, out.Excluded, res.Sum, res.Excluded)
		}
	}
	return res, excluded
}

// checkExcludedOnly fails unless excluded names exactly party, for a
// reason that contains why.
func checkExcludedOnly(t *testing.T, excluded map[string]string, party, why string) {
	t.Helper()
	if len(excluded) != 1 || !strings.Contains(excluded[party], why) {
		t.Fatalf("excluded %v, want %s only (%s)", excluded, party, why)
	}
}

// Both backends' decryption rounds, run by hand with every request and
// share carried in memory: a share that does not come is excluded and the
// root asks the parties it held back (Paillier) or re-plans over the
// parties left (lattice); a wrong share is excluded for its proof
// (Paillier) or named by the blame plan (lattice); every party decodes the
// exact sum, and nobody sends a message.
func TestDecryptionRoundsWithoutMessages(t *testing.T) {
	t.Parallel()
	paillierCase := func(t *testing.T, n, ask int, f fault, why string) {
		c := testConsortium(t, n)
		net := jobtest.NewNetwork(c.names...)
		step := testStep(c, c.names[0])
		inputs := testInputs(c, 20)
		ps := map[string]party[[]*paillier.Ciphertext, []*paillier.Ciphertext]{}
		for _, name := range c.names {
			s, sch, err := newPaillierRun(StepNetwork(net.Party(name), step), step, testConfig(c, name), 20)
			if err != nil {
				t.Fatal(err)
			}
			s.ask = ask
			ps[name] = party[[]*paillier.Ciphertext, []*paillier.Ciphertext]{s, sch}
		}
		totals, _ := roundsByHand(t, step, ps, inputs)
		res, excluded := decryptByHand(t, Root(step), ps, totals, f)
		checkSum(t, res.Sum, plainSum(inputs, c.names), 1e-3)
		checkExcludedOnly(t, excluded, f.party, why)
		checkSilent(t, net, c.names)
	}
	latticeCase := func(t *testing.T, n int, f fault, why string) {
		c, keys := latticeConsortium(t, n)
		net := jobtest.NewNetwork(c.names...)
		step := testStep(c, c.names[0])
		inputs, want := exactInputs(c, 30, 11)
		ps := map[string]party[*lattice.Aggregate, latticeTotal]{}
		for _, name := range c.names {
			s, sch, err := newLatticeRun(StepNetwork(net.Party(name), step), step, latticeConfig(keys, name), 30)
			if err != nil {
				t.Fatal(err)
			}
			ps[name] = party[*lattice.Aggregate, latticeTotal]{s, sch}
		}
		totals, _ := roundsByHand(t, step, ps, inputs)
		res, excluded := decryptByHand(t, Root(step), ps, totals, f)
		checkSum(t, res.Sum, want, 0)
		checkExcludedOnly(t, excluded, f.party, why)
		checkSilent(t, net, c.names)
	}
	// org02 is the first decryptor in tree order: with t+1 asked, its
	// lost share makes the root ask org03.
	t.Run("paillier/lost", func(t *testing.T) {
		t.Parallel()
		c := testConsortium(t, 3)
		paillierCase(t, 3, c.pk.Threshold+1, fault{party: "org02", lost: true}, "no decryption share in time")
	})
	t.Run("paillier/tampered", func(t *testing.T) {
		t.Parallel()
		paillierCase(t, 3, 3, fault{party: "org03", tampered: true}, "decryption share")
	})
	t.Run("lattice/lost", func(t *testing.T) {
		t.Parallel()
		latticeCase(t, 3, fault{party: "org03", lost: true}, "no decryption share in time")
	})
	t.Run("lattice/tampered", func(t *testing.T) {
		t.Parallel()
		latticeCase(t, 4, fault{party: "org03", tampered: true}, "wrong decryption share")
	})
}

// Decryption's rounds by hand, on ciphertexts the decryptors do not hold
// (as bicluster and boost run it): each request carries them, a
// decryptor's vet sees them before any share is made, the root releases
// the decryptors it did not ask, and the plaintexts come out; a decryptor
// whose vet refuses makes no share.
func TestDecryptionCarriedWithoutMessages(t *testing.T) {
	t.Parallel()
	c := testConsortium(t, 4)
	want := bigs(3, 1, 4)
	enc, err := c.pk.EncryptMany(rand.Reader, want)
	if err != nil {
		t.Fatal(err)
	}
	net := jobtest.NewNetwork(c.names...)
	for _, refuse := range []string{"", "org02"} {
		var vetted []string
		sharers := map[string]sharer{}
		var root *paillierOpening
		for _, name := range c.names {
			d := carried(c, net, name, len(enc))
			if name == d.Root {
				root = d.opening(name, enc)
				continue
			}
			sh, err := d.sharing(name, nil, func(cts []*paillier.Ciphertext) error {
				vetted = append(vetted, name)
				if len(cts) != len(enc) || cts[0].C.Cmp(enc[0].C) != 0 {
					t.Errorf("%s vets other ciphertexts than the root's", name)
				}
				if name == refuse {
					return errors.New("not ours to decrypt")
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			sharers[name] = sh
		}
		excluded, err := exchangeByHand(t, root, sharers, fault{})
		if err != nil {
			t.Fatal(err)
		}
		plain, err := root.combine(excluded)
		if err != nil {
			t.Fatal(err)
		}
		for i := range want {
			if plain[i].Cmp(want[i]) != 0 {
				t.Fatalf("plaintext %d: %v, want %v", i, plain[i], want[i])
			}
		}
		// The first t are asked; the others only when a share is missing
		// (else they are released, unvetted).
		wantVetted, wantExcluded := c.names[1:1+c.pk.Threshold], 0
		if refuse != "" {
			wantVetted, wantExcluded = c.names[1:], 1
			checkExcludedOnly(t, excluded, refuse, "no decryption share")
		}
		if !slices.Equal(vetted, wantVetted) || len(excluded) != wantExcluded {
			t.Errorf("vetted by %v excluding %v, want %v", vetted, excluded, wantVetted)
		}
	}
	checkSilent(t, net, c.names)
}
