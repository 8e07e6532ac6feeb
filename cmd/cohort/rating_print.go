package main

import (
	"fmt"
	"strconv"
)

// printRating prints the report of `cohort data rating`.
func (a *app) printRating(r *ratingReport) error {
	if a.format == "json" {
		return a.printJSON(r)
	}
	w := a.stdout
	yes := func(b bool) string {
		if b {
			return "yes"
		}
		return "no"
	}
	fmt.Fprintf(w, "%d users, %d issues (%d sensitive), %d non-sensitive ratings on 1..%d; l₀ %.4g (Cor. 7.1), l at most %.4g on the scale (Thm. 7.2)\n",
		r.Users, r.Issues, r.Sensitive, r.Ratings, r.Max, r.L0, r.LMax)
	if s := r.Search; s != nil {
		eps := func(p *int) string {
			if p == nil {
				return "none"
			}
			return strconv.Itoa(*p)
		}
		fmt.Fprintf(w, "ε search by slicing (§7.2.3–7.2.4): for k = %d ε = %s", r.K, eps(s.ForK))
		if r.L > 0 {
			fmt.Fprintf(w, ", for l = %g ε = %s, for both ε = %s", r.L, eps(s.ForL), eps(s.ForBoth))
		}
		fmt.Fprintf(w, "; %.3f s\n", s.Seconds)
		if s.ForBoth == nil {
			return nil
		}
	}
	req := fmt.Sprintf("(%d, %d)", r.K, r.Epsilon)
	if r.L > 0 {
		req = fmt.Sprintf("(%d, %d, %g)", r.K, r.Epsilon, r.L)
	}
	dg := r.Degree
	fmt.Fprintf(w, "degree check (Thm. 6.1) at ε = %d: smallest neighbourhood %d, %d users under k, smallest sensitive SD %.4g, maxsize %d: %s-anonymous: %s\n",
		r.Epsilon, dg.MinGroup, dg.Below, dg.MinSD, dg.MaxSize, req, yes(r.DegreeOK))
	dc := r.Decomposition
	fmt.Fprintf(w, "%d components, %d Hamming groups; %d-decomposable (§6.3.2): %s (%d components not, %d undecided)\n",
		dc.Components, r.Hamming, r.K, dc.Verdict, dc.Not, dc.Undecided)
	p := func(name string, s *ratingPartition) {
		fmt.Fprintf(w, "%s: %d groups, k = %d, l = %.4g: %s %s; %.3f s\n", name, s.Groups, s.K, s.L, req, yes(s.Satisfied), s.Seconds)
	}
	p("slicing (ch. 7)", r.Slicing)
	if r.Pairwise != nil {
		p("pairwise", r.Pairwise)
		fmt.Fprintf(w, "same partition: %s, slicing %.1f× faster\n", yes(*r.SamePartition), r.Pairwise.Seconds/max(r.Slicing.Seconds, 1e-9))
	}
	if an := r.Anonymised; an != nil {
		fmt.Fprintf(w, "anonymised to %s: %d groups (smallest %d), distortion %d (Def. 6.4), %s-anonymous by partition and degree: %s; %.3f s\n",
			an.Out, an.Groups, an.Smallest, an.Distortion, req, yes(an.Satisfied), an.Seconds)
		fmt.Fprintf(w, "non-sensitive issues rated by someone: %d before, %d after\n", an.IssuesBefore, an.IssuesAfter)
		fmt.Fprintf(w, "utility (§6.4): query error %.2f%%, membership change %.2f%%, centroid cosine %.5f (inner product %.4g), average SD %.4g → %.4g, within groups %.4g (at most ε/2 = %g)\n",
			100*an.QueryError, 100*an.MembershipChange, an.CentroidCosine, an.CentroidInner, an.AverageSDBefore, an.AverageSDAfter, an.WithinGroupSD, float64(r.Epsilon)/2)
	}
	return nil
}
