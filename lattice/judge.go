package lattice

import "slices"

// Verdict says what comparing the quorums' decryptions showed. The
// reasoning assumes at most one member's decryption shares are wrong (a
// faulty or malicious member, which may behave differently in each quorum);
// under that assumption every statement below is sound: an honest member is
// never named, and a returned total is the true one.
//
// A member x is a candidate when every quorum without x decrypted the same
// plaintext. The faulty member is always a candidate (the quorums without it
// are all honest). So:
//
//   - all quorums agree: the plaintext is the total. Confirmed when no
//     member is in every quorum (a verified plan): a faulty member would have
//     been left out of some quorum, which would then disagree.
//   - they disagree, every candidate is left out of some quorum, and every
//     candidate's absent quorums agree on one plaintext: that plaintext is
//     the total (it is what the faulty member's absent, all-honest quorums
//     decrypted). If there is a single candidate, it is named Faulty.
//   - otherwise no plaintext is trusted (ErrDisagree) and the candidates are
//     the suspects; a PlanBlame decryption then names the faulty member. No
//     candidate at all means more than one member is faulty.
//
// With Quorum+1 or fewer available members, a member cannot be told apart
// from every other (no quorum leaves out two members): the wrong share is
// detected but not always named.
type Verdict struct {
	// Agreed: every quorum decrypted the same plaintext.
	Agreed bool
	// Confirmed: the returned plaintext holds even if one member's shares
	// were wrong.
	Confirmed bool
	// Faulty names the member whose shares were wrong, when it can be told.
	Faulty []int
	// Suspects are the members one of which made wrong shares (empty when
	// the quorums agree).
	Suspects []int
	// Groups lists the quorum indices that decrypted the same plaintext,
	// one group per distinct plaintext, in order of first appearance.
	Groups [][]int
}

// judge applies the rules above to the quorums' plaintext digests and
// returns the verdict and the index of a quorum holding the trusted
// plaintext, or -1.
func judge(plan *Plan, values []Digest) (Verdict, int) {
	var v Verdict
	group := make([]int, len(values)) // quorum -> group
	var reps []Digest
	for q, d := range values {
		g := slices.Index(reps, d)
		if g < 0 {
			g = len(reps)
			reps = append(reps, d)
			v.Groups = append(v.Groups, nil)
		}
		group[q] = g
		v.Groups[g] = append(v.Groups[g], q)
	}
	if len(reps) == 1 {
		v.Agreed, v.Confirmed = true, plan.Verified
		return v, 0
	}
	var members []int
	for _, q := range plan.Quorums {
		for _, p := range q {
			if !slices.Contains(members, p) {
				members = append(members, p)
			}
		}
	}
	slices.Sort(members)
	truth, trusted := -1, true
	for _, x := range members {
		g, ok := absentGroup(plan, group, x)
		if !ok {
			continue
		}
		v.Suspects = append(v.Suspects, x)
		switch {
		case g < 0: // x is in every quorum: nothing decrypted without it
			trusted = false
		case truth < 0:
			truth = g
		case truth != g: // candidates disagree on the truth
			trusted = false
		}
	}
	if !trusted || truth < 0 {
		return v, -1
	}
	v.Confirmed = true
	if len(v.Suspects) == 1 {
		v.Faulty = v.Suspects
	}
	return v, v.Groups[truth][0]
}

// absentGroup reports whether every quorum without x decrypted the same
// plaintext (x is a candidate), and that plaintext's group, or -1 when x is
// in every quorum.
func absentGroup(plan *Plan, group []int, x int) (int, bool) {
	g := -1
	for q, members := range plan.Quorums {
		if slices.Contains(members, x) {
			continue
		}
		if g >= 0 && group[q] != g {
			return 0, false
		}
		g = group[q]
	}
	return g, true
}
