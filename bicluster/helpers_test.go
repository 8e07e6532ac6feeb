package bicluster_test

import (
	"cmp"
	"crypto/sha256"
	"math"
	"slices"
	"testing"

	"github.com/cohortdm/cohort/bicluster"
	"github.com/cohortdm/cohort/bicluster/synth"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
)

// phoenixInClear runs the pure Phoenix steps for parties parties over m's
// rows split by synth.Split, summing the contributions in the clear, and
// returns the parties' local biclusters merged in the clear and extended
// by FitRows, in m's row indices.
func phoenixInClear(m *bicluster.Matrix, parties int, seed []byte, p bicluster.Params) ([]bicluster.Bicluster, error) {
	return phoenixFixed(m, parties, seed, p, 0)
}

// phoenixFixed is phoenixInClear with every contribution rounded to
// multiples of 2^-fracBits before summing, as secureagg's fixed-point
// encoding does (fracBits 0: no rounding).
func phoenixFixed(m *bicluster.Matrix, parties int, seed []byte, p bicluster.Params, fracBits int) ([]bicluster.Bicluster, error) {
	return phoenixOrdered(m, parties, seed, seed, p, fracBits)
}

// jointSeedOf is the joint seed job rep drew (checked against the job
// package's leakage profile of a draw).
func jointSeedOf(t testing.TB, rep *jobtest.Report, names []string) []byte {
	t.Helper()
	joint, err := rep.CheckJointSeed(job.NewJointSeed(rep.JobID, 0, names))
	if err != nil {
		t.Fatal(err)
	}
	return joint
}

// pinJointSeed gives every party of opts a contribution to the job's joint
// seed derived from seed, kept where a party keeps the one it draws
// (job.KeptRandom, the job's scratch), so that the party opens that one:
// the job's initial column order, and its biclusters, are then the same
// on every run, as a test that compares scores with fixed margins needs.
func pinJointSeed(t testing.TB, opts jobtest.Options, seed []byte) {
	t.Helper()
	id := cmp.Or(opts.JobID, "job-1")
	for name, sec := range opts.Secrets {
		c := sha256.Sum256(append(append([]byte("joint seed contribution "), seed...), name...))
		if err := sec.WriteSecret("jobs/"+id+"/joint-seed/0", c[:]); err != nil {
			t.Fatal(err)
		}
	}
}

// phoenixAfterJob is phoenixInClear from the initial column order of the
// job rep's joint seed (drawn by the parties, so known only once the job
// ran): the order the job itself started from.
func phoenixAfterJob(t testing.TB, rep *jobtest.Report, names []string, m *bicluster.Matrix, parties int, seed []byte, p bicluster.Params) []bicluster.Bicluster {
	t.Helper()
	bs, err := phoenixOrdered(m, parties, seed, jointSeedOf(t, rep, names), p, 0)
	if err != nil {
		t.Fatal(err)
	}
	return bs
}

// phoenixOrdered is phoenixFixed with the initial column order drawn from
// orderSeed instead of seed.
func phoenixOrdered(m *bicluster.Matrix, parties int, seed, orderSeed []byte, p bicluster.Params, fracBits int) ([]bicluster.Bicluster, error) {
	parts, err := synth.Split(m, parties, seed)
	if err != nil {
		return nil, err
	}
	cols := bicluster.InitialColumns(orderSeed, m.Cols)
	states := make([]bicluster.PartyState, parties)
	for iter := 1; ; iter++ {
		var sum bicluster.Contribution
		for i, part := range parts {
			st, c, err := bicluster.Round(part.Matrix, states[i], cols, p.Mode)
			if err != nil {
				return nil, err
			}
			states[i] = st
			if fracBits > 0 {
				v := c.Vector()
				for k, x := range v {
					v[k] = math.Round(math.Ldexp(x, fracBits))
					v[k] = math.Ldexp(v[k], -fracBits)
				}
				if c, err = bicluster.ContributionFromVector(v, m.Cols); err != nil {
					return nil, err
				}
			}
			if i == 0 {
				sum = c
			} else if sum, err = bicluster.Aggregate(sum, c); err != nil {
				return nil, err
			}
		}
		next, changed, err := bicluster.UpdateColumns(sum, cols)
		if err != nil {
			return nil, err
		}
		cols = next
		if bicluster.Done(changed, iter, p.MaxIter) {
			break
		}
	}
	var locals []bicluster.Local
	for i, part := range parts {
		_, bs, err := bicluster.Finish(part.Matrix, states[i], cols, p)
		if err != nil {
			return nil, err
		}
		for _, b := range bs {
			locals = append(locals, bicluster.NewLocal(i, part.Matrix, b))
		}
	}
	globals, err := bicluster.Merge(locals, bicluster.PlainSimilar(locals, p.Beta), p.MinRows)
	if err != nil {
		return nil, err
	}
	out := make([]bicluster.Bicluster, len(globals))
	for k, g := range globals {
		var rows []int
		for _, pr := range g.Rows {
			rows = append(rows, parts[pr.Party].Rows[pr.Row])
		}
		for i, part := range parts {
			fit, err := bicluster.FitRows(part.Matrix, g, p)
			if err != nil {
				return nil, err
			}
			for _, r := range fit {
				rows = append(rows, parts[i].Rows[r])
			}
		}
		slices.Sort(rows)
		rows = slices.Compact(rows)
		out[k] = bicluster.Bicluster{Rows: rows, Cols: g.Cols}
	}
	return out, nil
}
