package coherence

import "context"

// LossOfItems is (N − N')/N, N and N' the item occurrences of db and of its
// publication pub (Xu, ch. 4, §4.5.1); private and kept items count too.
func LossOfItems(db, pub *Database) float64 {
	n := db.Occurrences()
	if n == 0 {
		return 0
	}
	return float64(n-pub.Occurrences()) / float64(n)
}

// LossOfNuggets is (R − R')/R for R nuggets before and R' after.
func LossOfNuggets(before, after Count) float64 {
	if before.IsZero() {
		return 0
	}
	return (before.Float() - after.Float()) / before.Float()
}

// CountNuggets counts the nuggets (Definition 7) of db without the removed
// items, over their border: no nugget is enumerated.
func CountNuggets(ctx context.Context, db *Labelled, removed []int32, nug Nuggets) (Count, error) {
	if err := nug.check(); err != nil {
		return Count{}, err
	}
	pr, err := newProblem(db, Params{H: 1, K: 2})
	if err != nil {
		return Count{}, err
	}
	f, err := newNuggetFamily(ctx, pr, removed, nug)
	if err != nil {
		return Count{}, err
	}
	total, _, err := f.counts(len(db.Items))
	return total, err
}

// CountMoles counts the moles (Definition 5) of db, size-1 moles and their
// supersets included, over the mole border: no mole is enumerated.
func CountMoles(ctx context.Context, db *Labelled, prm Params) (Count, error) {
	pr, res, moles, err := start(ctx, db, prm)
	if err != nil {
		return Count{}, err
	}
	cnt := newCounter(ctx, len(db.Items))
	if err := cnt.count(moleBorder(pr, res.Suppressed, moles), -1, prm.P); err != nil {
		return Count{}, err
	}
	return cnt.total, nil
}

// MolesLeft counts the minimal moles (Definition 9; size-1 moles included)
// of db with the removed items suppressed: 0 for every cohesion, and the
// attribute attacks a KAnonymizer publication leaves. It fails, as the
// algorithms do, when db has no cohesion at all (Theorem 3).
func MolesLeft(ctx context.Context, db *Labelled, removed []int32, prm Params) (int, error) {
	pub := &Labelled{Database: db.Without(removed), Roles: db.Roles}
	_, res, _, err := start(ctx, pub, prm)
	if err != nil {
		return 0, err
	}
	return res.Size1 + res.MinimalMoles, nil
}
