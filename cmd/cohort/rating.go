package main

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/spf13/cobra"

	"github.com/cohortdm/cohort/anonymize/rating"
)

// ratingOpts are the flags of `cohort data rating`.
type ratingOpts struct {
	k, eps, maxR, queries, clusters, iters int
	l                                      float64
	layout, id, out                        string
	sensitive                              []string
	pairwise, literal                      bool
	seed                                   uint64
}

// dataRatingCmd is `cohort data rating TABLE`: Sun's (k, ε)- and
// (k, ε, l)-anonymity of survey-rating data, checked and made.
func (a *app) dataRatingCmd() *cobra.Command {
	var o ratingOpts
	cmd := &cobra.Command{
		Use:   "rating TABLE --k K [--epsilon E] [--l L] [--sensitive ISSUE,...] [--out FILE]",
		Short: "Check and make survey-rating data (k, ε)- or (k, ε, l)-anonymous (Sun, chs. 6–7)",
		Long: `rating reads a survey-rating table (a user per row and an issue per column, a rating
1..max or empty for none; or with --layout long one rating per row, columns user, item
and rating) and checks it against Sun's (k, ε)- and (k, ε, l)-anonymity (X. Sun,
"Privacy Preserving Data Sharing in Data Mining Environment", 2010, chs. 6–7): two
users are ε-proximate if no non-sensitive issue's ratings differ by more than ε (a
rating against none costs max, Eq. 6.1); every user must be ε-proximate to at least
k − 1 others, and with --l every sensitive issue's standard deviation in every such
group must be at least l. It prints

  the degree check (Thm. 6.1; Defs. 6.2–6.3): the smallest ε-neighbourhood, the users
      whose neighbourhood is under k, the smallest sensitive standard deviation in one,
      and maxsize (Def. 7.1), the largest;
  k-decomposability (§6.3.2: the ε-graph's components split into disjoint cliques of
      at least k; decided exactly on components of up to 24 users, else certified
      greedily or left unknown), the components and the flag matrix's Hamming groups;
  the satisfaction check by slicing (ch. 7, Alg. 1 with singleton pruning): its
      partition, k and l read off it; with --pairwise also the O(n²m) baseline, its
      time and whether it finds the same partition;
  l₀, the whole table's sensitive standard deviation (no grouping reaches l above it,
      Cor. 7.1), and (max − 1)/2, the largest l on the scale (Thm. 7.2).

Without --epsilon it first searches the smallest ε whose slicing partition meets k
(§7.2.3), l (§7.2.4) and both, and checks at the last. With --out it makes the table
(k, ε, l)-anonymous (§6.3.4: groups of the nearest users, merged while a sensitive
standard deviation is under l; each group's non-sensitive issues given one rating
pattern and modified to a range of ε keeping their sums, only the issues whose range
exceeds ε, or with --literal every issue of a group not yet an ε-clique as the thesis
does; sensitive ratings kept),
writes it in the input's layout, checks it again, and prints the distortion (Def. 6.4)
and §6.4's utility measures: the query error on the average rating of --queries random
issues, the share of users whose k-means cluster (--clusters) changes, the centroid
comparison, and the average standard deviation (whole, and within groups: at most
ε/2). docs/anonymize.md has figures and the decisions.`,
		Example: `  cohort data rating ratings.csv --k 5 --epsilon 1 --sensitive age
  cohort data rating ratings.csv --k 10 --l 1 --sensitive age --out anon.csv
  cohort data rating u.csv --layout long --k 10 --epsilon 2 --out anon.csv --format json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case o.k < 1:
				return fmt.Errorf("--k must be at least 1")
			case o.eps < 0:
				return fmt.Errorf("--epsilon must be at least 0")
			case o.l < 0 || math.IsNaN(o.l) || math.IsInf(o.l, 0):
				return fmt.Errorf("--l must be a number of at least 0")
			case o.maxR < 0:
				return fmt.Errorf("--max must be at least 1")
			case o.queries < 1 || o.clusters < 1 || o.iters < 1:
				return fmt.Errorf("--queries, --clusters and --iterations must be at least 1")
			}
			if !cmd.Flags().Changed("epsilon") {
				o.eps = -1 // search
			}
			d, err := loadRatings(cmd.Context(), args[0], o.layout, o.id, o.sensitive, o.maxR)
			if err != nil {
				return err
			}
			if o.k > len(d.m.R) {
				return fmt.Errorf("--k is larger than the table's %d users", len(d.m.R))
			}
			if o.eps > d.m.Max {
				return fmt.Errorf("--epsilon is above the maximum rating %d (every user is then proximate to every other)", d.m.Max)
			}
			rep, err := a.ratingRun(cmd, d, o)
			if rep != nil {
				if perr := a.printRating(rep); perr != nil {
					return perr
				}
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.k, "k", 0, "every user ε-proximate to at least k − 1 others (required)")
	f.IntVar(&o.eps, "epsilon", 0, "ε, the largest rating difference on a non-sensitive issue (if not given: the smallest ε that slicing finds for k and l)")
	f.Float64Var(&o.l, "l", 0, "the least standard deviation of every sensitive issue in every group (0: (k, ε) only)")
	f.StringSliceVar(&o.sensitive, "sensitive", nil, "the sensitive issues (columns, or items with --layout long)")
	f.IntVar(&o.maxR, "max", 0, "the maximum rating r of the scale (default: the largest in the table)")
	f.StringVar(&o.layout, "layout", "wide", "wide (a user per row, an issue per column) or long (user,item,rating rows)")
	f.StringVar(&o.id, "id", "", "the user column of a wide table (default: the first column)")
	f.BoolVar(&o.pairwise, "pairwise", false, "also run the pairwise baseline (O(n²m)) and compare it with slicing")
	f.BoolVar(&o.literal, "literal", false, "modify as the thesis writes it (every issue of a group not yet an ε-clique), not only issues whose range exceeds ε")
	f.StringVar(&o.out, "out", "", "anonymise and write the table here (CSV, Parquet or sqlite:PATH#TABLE; never replaced)")
	f.IntVar(&o.queries, "queries", 100, "random issues whose average rating the query error compares")
	f.IntVar(&o.clusters, "clusters", 10, "k-means clusters for the membership change")
	f.IntVar(&o.iters, "iterations", 100, "at most this many k-means rounds")
	f.Uint64Var(&o.seed, "seed", 1, "seed of the queries and of the k-means initial users")
	return cmd
}

// ratingReport is what `cohort data rating` prints.
type ratingReport struct {
	Users         int                  `json:"users"`
	Issues        int                  `json:"issues"`
	Sensitive     int                  `json:"sensitive_issues"`
	Ratings       int                  `json:"ratings"`
	Max           int                  `json:"max_rating"`
	K             int                  `json:"k"`
	Epsilon       int                  `json:"epsilon"`
	L             float64              `json:"l"`
	Search        *ratingSearch        `json:"search,omitempty"`
	L0            float64              `json:"l0"`
	LMax          float64              `json:"l_max"`
	Degree        rating.DegreeReport  `json:"degree"`
	DegreeOK      bool                 `json:"degree_anonymous"`
	Hamming       int                  `json:"hamming_groups"`
	Decomposition rating.Decomposition `json:"decomposition"`
	Slicing       *ratingPartition     `json:"slicing,omitempty"`
	Pairwise      *ratingPartition     `json:"pairwise,omitempty"`
	SamePartition *bool                `json:"same_partition,omitempty"`
	Anonymised    *ratingAnon          `json:"anonymised,omitempty"`
}

// ratingSearch is the smallest ε slicing finds for k, for l and for
// both (nil: none in 0..max).
type ratingSearch struct {
	ForK    *int    `json:"for_k"`
	ForL    *int    `json:"for_l,omitempty"`
	ForBoth *int    `json:"for_both"`
	Seconds float64 `json:"seconds"`
}

// ratingPartition is a check's partition.
type ratingPartition struct {
	Groups    int     `json:"groups"`
	K         int     `json:"k"`
	L         float64 `json:"l"`
	Satisfied bool    `json:"satisfied"`
	Seconds   float64 `json:"seconds"`
}

// ratingAnon is the anonymised table's figures.
type ratingAnon struct {
	Out              string              `json:"out"`
	Groups           int                 `json:"groups"`
	Smallest         int                 `json:"smallest_group"`
	Distortion       int                 `json:"distortion"`
	Degree           rating.DegreeReport `json:"degree"`
	Satisfied        bool                `json:"satisfied"`
	QueryError       float64             `json:"query_error"`
	MembershipChange float64             `json:"membership_change"`
	CentroidInner    float64             `json:"centroid_inner_product"`
	CentroidCosine   float64             `json:"centroid_cosine"`
	AverageSDBefore  float64             `json:"average_sd_before"`
	AverageSDAfter   float64             `json:"average_sd_after"`
	WithinGroupSD    float64             `json:"within_group_sd"`
	IssuesBefore     int                 `json:"issues_rated_before"`
	IssuesAfter      int                 `json:"issues_rated_after"`
	Seconds          float64             `json:"seconds"`
}

// ratingRun computes the report; with no ε found by the search it
// returns the report so far and an error.
func (a *app) ratingRun(cmd *cobra.Command, d *ratingData, o ratingOpts) (*ratingReport, error) {
	m := d.m
	rep := &ratingReport{Users: len(m.R), Issues: len(m.Sensitive), Max: m.Max, K: o.k, Epsilon: o.eps, L: o.l,
		L0: m.WholeSD(), LMax: float64(m.Max-1) / 2, Hamming: m.HammingGroups()}
	for _, row := range m.R {
		for i, x := range row {
			if x > 0 && !m.Sensitive[i] {
				rep.Ratings++
			}
		}
	}
	for _, s := range m.Sensitive {
		if s {
			rep.Sensitive++
		}
	}
	if math.IsInf(rep.L0, 1) {
		rep.L0 = 0
	}
	if o.eps < 0 {
		s, err := ratingEpsSearch(m, o.k, o.l)
		rep.Search = s
		if err != nil {
			return rep, err
		}
		rep.Epsilon = *s.ForBoth
	}
	eps := rep.Epsilon
	adj := m.Graph(eps)
	rep.Degree = m.DegreeCheck(adj, o.k)
	rep.DegreeOK = rep.Degree.Below == 0 && rep.Degree.MinSD >= o.l
	if math.IsInf(rep.Degree.MinSD, 1) {
		rep.Degree.MinSD = 0
	}
	rep.Decomposition = rating.KDecompose(adj, o.k)
	start := time.Now()
	sl := m.Slice(o.k, eps)
	rep.Slicing = partitionOf(m, sl, o, time.Since(start))
	if o.pairwise {
		start = time.Now()
		pw := m.Pairwise(o.k, eps)
		rep.Pairwise = partitionOf(m, pw, o, time.Since(start))
		same := slices.EqualFunc(sl, pw, slices.Equal)
		rep.SamePartition = &same
	}
	if o.out == "" {
		return rep, nil
	}
	an, err := ratingAnonymise(cmd, d, o, eps)
	rep.Anonymised = an
	return rep, err
}

func partitionOf(m *rating.Matrix, g [][]int, o ratingOpts, d time.Duration) *ratingPartition {
	k, l := m.KL(g)
	return &ratingPartition{Groups: len(g), K: k, L: l, Satisfied: k >= o.k && l >= o.l, Seconds: d.Seconds()}
}

// ratingEpsSearch runs §7.2.3 and §7.2.4; an error when no ε meets both.
func ratingEpsSearch(m *rating.Matrix, k int, l float64) (*ratingSearch, error) {
	start := time.Now()
	s := &ratingSearch{}
	find := func(k int, l float64) (*int, error) {
		eps, _, err := m.EpsilonFor(k, l)
		if errors.Is(err, rating.ErrNoSolution) {
			return nil, nil
		}
		return &eps, err
	}
	var err error
	if s.ForK, err = find(k, 0); err != nil {
		return s, err
	}
	if l > 0 {
		if s.ForL, err = find(1, l); err != nil {
			return s, err
		}
	}
	if s.ForBoth, err = find(k, l); err != nil {
		return s, err
	}
	s.Seconds = time.Since(start).Seconds()
	if l0 := m.WholeSD(); s.ForBoth == nil && l > l0 {
		return s, fmt.Errorf("%w: --l is above l₀ = %.4g, the whole table's smallest sensitive standard deviation, which no grouping exceeds (Corollary 7.1)", rating.ErrNoSolution, l0)
	}
	if s.ForBoth == nil {
		return s, fmt.Errorf("%w: slicing meets --k and --l at no ε in 0..%d; give --epsilon to anonymise at one", rating.ErrNoSolution, m.Max)
	}
	return s, nil
}

// ratingAnonymise makes, writes and measures the anonymised table.
func ratingAnonymise(cmd *cobra.Command, d *ratingData, o ratingOpts, eps int) (*ratingAnon, error) {
	start := time.Now()
	mode := rating.Improved
	if o.literal {
		mode = rating.Literal
	}
	an, groups, dist, err := d.m.Anonymise(o.k, eps, o.l, mode)
	if err != nil {
		return nil, fmt.Errorf("--l: %w", err)
	}
	r := &ratingAnon{Out: o.out, Groups: len(groups), Distortion: dist, Seconds: time.Since(start).Seconds()}
	r.Smallest, _ = an.KL(groups)
	r.Degree = an.DegreeCheck(an.Graph(eps), o.k)
	if math.IsInf(r.Degree.MinSD, 1) {
		r.Degree.MinSD = 0
	}
	r.Satisfied = an.Satisfies(groups, o.k, eps, o.l) && r.Degree.Below == 0 && r.Degree.MinSD >= o.l
	if !r.Satisfied { // Anonymise's groups are ε-cliques of at least k: a failure here is a bug
		return r, fmt.Errorf("internal error: the anonymised table fails its own check")
	}
	r.QueryError = rating.QueryError(d.m, an, o.queries, o.seed)
	r.MembershipChange = rating.MembershipChange(d.m, an, o.clusters, o.iters, o.seed)
	r.CentroidInner, r.CentroidCosine, _ = rating.CentroidComparison(d.m, an)
	r.AverageSDBefore, r.AverageSDAfter = d.m.AverageSD(nil), an.AverageSD(nil)
	r.WithinGroupSD = an.AverageSD(groups)
	r.IssuesBefore, r.IssuesAfter = ratedIssues(d.m), ratedIssues(an)
	return r, writeRatings(cmd.Context(), o.out, d, an)
}

// ratedIssues counts the non-sensitive issues someone rated.
func ratedIssues(m *rating.Matrix) int {
	n := 0
	for i, s := range m.Sensitive {
		if !s && slices.ContainsFunc(m.R, func(row []int) bool { return row[i] > 0 }) {
			n++
		}
	}
	return n
}
