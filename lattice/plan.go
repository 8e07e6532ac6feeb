package lattice

import (
	"fmt"
	"slices"
)

// Plan fixes which quorums decrypt one aggregate: each quorum is Quorum
// members (Shamir points, sorted) whose decryption shares together open the
// aggregate. Every party derives the same plan from the committed step (the
// key and the members available), so no message carries it; shares name
// the plan's digest and their quorum's index.
//
// A decryption share has no cheap validity proof, so wrong shares are found
// by comparing decryptions (see Verdict):
//
//   - PlanSingle: one quorum. Cheapest; a wrong share goes unnoticed unless
//     it breaks the layout's range checks. For semi-honest decryptors.
//   - PlanVerified: quorums with no member common to all (two if the
//     members allow disjoint quorums, else three or more). A single party
//     whose shares change the result is always detected: some quorum avoids
//     it and decrypts the true sum, which then differs from a quorum it
//     spoiled. At the default quorum a member makes at most two shares per
//     aggregate.
//   - PlanBlame: used after a detection. For every two members x ≠ y it has
//     a quorum without both (when there are at least Quorum+2 members) and a
//     quorum with y and without x, so that a single faulty party is the only
//     member whose absence leaves every decryption agreeing: it is named.
//     Costs several shares per member; only run after a disagreement.
type Plan struct {
	Quorums [][]int
	// Verified is whether a single faulty share-maker is always detected:
	// no member is in every quorum.
	Verified bool
	digest   Digest
}

// PlanSingle decrypts with the first Quorum of the available members.
func PlanSingle(pk *PublicKey, available []int) (*Plan, error) {
	if err := checkAvailable(pk, available); err != nil {
		return nil, err
	}
	return newPlan([][]int{slices.Clone(available[:pk.Quorum])}), nil
}

// PlanVerified decrypts with quorums that have no member in common, built
// greedily: each next quorum takes the members outside the current common
// part first. It needs more available members than the quorum.
func PlanVerified(pk *PublicKey, available []int) (*Plan, error) {
	if err := checkAvailable(pk, available); err != nil {
		return nil, err
	}
	if len(available) == pk.Quorum {
		return nil, fmt.Errorf("%w: detecting a wrong share needs more available members than the quorum (%d)", ErrParams, pk.Quorum)
	}
	return newPlan(verifiedQuorums(available, pk.Quorum)), nil
}

func verifiedQuorums(available []int, q int) [][]int {
	quorums := [][]int{slices.Clone(available[:q])}
	common := slices.Clone(available[:q])
	for len(common) > 0 {
		next := make([]int, 0, q)
		for _, p := range available {
			if len(next) < q && !slices.Contains(common, p) {
				next = append(next, p)
			}
		}
		for _, p := range common {
			if len(next) < q {
				next = append(next, p)
			}
		}
		slices.Sort(next)
		quorums = append(quorums, next)
		common = slices.DeleteFunc(common, func(p int) bool { return !slices.Contains(next, p) })
	}
	return quorums
}

// PlanBlame extends PlanVerified so that a single faulty party can be named
// (see Plan). With exactly Quorum+1 members no quorum avoids two of them;
// the plan then holds every quorum, which names a faulty party only when
// the decryptions it did not spoil agree.
func PlanBlame(pk *PublicKey, available []int) (*Plan, error) {
	v, err := PlanVerified(pk, available)
	if err != nil {
		return nil, err
	}
	q, n := pk.Quorum, len(available)
	quorums := v.Quorums
	add := func(excluded []int) {
		next := slices.DeleteFunc(slices.Clone(available), func(p int) bool { return slices.Contains(excluded, p) })
		if !slices.ContainsFunc(quorums, func(x []int) bool { return slices.Equal(x, next) }) {
			quorums = append(quorums, next)
		}
	}
	avoids := func(x, y int) bool { // some quorum avoids both x and y
		return slices.ContainsFunc(quorums, func(qu []int) bool { return !slices.Contains(qu, x) && !slices.Contains(qu, y) })
	}
	if n >= q+2 {
		for _, pair := range uncoveredPairs(available, avoids) {
			if !avoids(pair[0], pair[1]) {
				add(growExcluded(available, pair, n-q, avoids))
			}
		}
	}
	separates := func(x, y int) bool { // some quorum has y and not x
		return slices.ContainsFunc(quorums, func(qu []int) bool { return !slices.Contains(qu, x) && slices.Contains(qu, y) })
	}
	for _, x := range available {
		for _, y := range available {
			if x != y && !separates(x, y) {
				excluded := []int{x}
				for _, z := range available {
					if len(excluded) < n-q && z != x && z != y {
						excluded = append(excluded, z)
					}
				}
				add(excluded)
			}
		}
	}
	return newPlan(quorums), nil
}

// uncoveredPairs lists the pairs no quorum avoids yet, in order.
func uncoveredPairs(available []int, avoided func(x, y int) bool) [][2]int {
	var out [][2]int
	for i, x := range available {
		for _, y := range available[i+1:] {
			if !avoided(x, y) {
				out = append(out, [2]int{x, y})
			}
		}
	}
	return out
}

// growExcluded grows the pair into a set of `size` members to leave out of
// one quorum, adding each time the member that leaves out the most pairs no
// quorum avoids yet (the first on ties), so few quorums cover every pair.
func growExcluded(available []int, pair [2]int, size int, avoided func(x, y int) bool) []int {
	excluded := []int{pair[0], pair[1]}
	for len(excluded) < size {
		best, bestGain := 0, -1
		for _, z := range available {
			if slices.Contains(excluded, z) {
				continue
			}
			gain := 0
			for _, e := range excluded {
				if !avoided(z, e) {
					gain++
				}
			}
			if gain > bestGain {
				best, bestGain = z, gain
			}
		}
		excluded = append(excluded, best)
	}
	return excluded
}

func newPlan(quorums [][]int) *Plan {
	p := &Plan{Quorums: quorums, Verified: true}
	for _, member := range quorums[0] {
		if !slices.ContainsFunc(quorums, func(q []int) bool { return !slices.Contains(q, member) }) {
			p.Verified = false
		}
	}
	h := newHasher("cohort/mhe/plan/1")
	h.uint(uint64(len(quorums)))
	for _, q := range quorums {
		h.ints(q)
	}
	p.digest = h.sum()
	return p
}

// checkAvailable checks the available members against the key.
func checkAvailable(pk *PublicKey, available []int) error {
	if err := checkParties(available, len(pk.Members)); err != nil {
		return fmt.Errorf("%w: available members", ErrParams)
	}
	if len(available) < pk.Quorum {
		return fmt.Errorf("%w: %d available members cannot reach the quorum of %d", ErrParams, len(available), pk.Quorum)
	}
	return nil
}

// QuorumsOf returns the indices of the quorums party is in.
func (p *Plan) QuorumsOf(party int) []int {
	var out []int
	for i, q := range p.Quorums {
		if slices.Contains(q, party) {
			out = append(out, i)
		}
	}
	return out
}

// Digest identifies the plan; shares carry it.
func (p *Plan) Digest() Digest { return p.digest }
