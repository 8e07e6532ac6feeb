package quantile

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// This file is how the parties hold a coordinator to the counts they
// received (the package doc's Checks on the coordinator): every party
// keeps the pooled counts the root sent it and reports their digest; the
// coordinator commits the counts with the parties whose digest matched;
// before each later step every party refuses a committed round that
// disagrees with what it received, or that nobody but the coordinator
// vouched for.

// toCounts reads a decrypted sum as pooled counts: whole numbers in
// [0, 2^53]. The error names no value.
func toCounts(sum []float64) ([]int64, error) {
	out := make([]int64, len(sum))
	for i, v := range sum {
		if v != math.Trunc(v) || v < 0 || v > 1<<53 {
			return nil, errors.New("a pooled count is not a count")
		}
		out[i] = int64(v)
	}
	return out, nil
}

// countsDigest binds a round's pooled counts to the job, phase and round
// (not to the attempt: every attempt of a round counts at the same
// thresholds over the same parties, so all give the same counts).
func countsDigest(step job.Step, counts []int64) []byte {
	b := []byte("cohort/quantile/counts\x00" + step.Job + "\x00" + step.Phase + "\x00" + strconv.Itoa(step.Round) + "\x00")
	for _, c := range counts {
		b = binary.BigEndian.AppendUint64(b, uint64(c))
	}
	d := sha256.Sum256(b)
	return d[:]
}

// vouchers splits the parties that reported a digest of the counts they
// received into those whose digest is that of counts and those whose is
// not, both sorted.
func vouchers(o *job.Outcome[output], counts []int64) (vouched, differ []string) {
	want := countsDigest(o.Step, counts)
	for _, name := range slices.Sorted(maps.Keys(o.Results)) {
		switch d := o.Results[name].Counts; {
		case len(d) == 0:
		case bytes.Equal(d, want):
			vouched = append(vouched, name)
		default:
			differ = append(differ, name)
		}
	}
	return vouched, differ
}

// viewName is the job scratch file that keeps the pooled counts this
// party received in a round, so that a restart does not forget them.
func (s *session) viewName(round int) string {
	return "jobs/" + s.p.JobID() + "/quantile/counts-" + strconv.Itoa(round)
}

// remember keeps the pooled counts this party received in a round.
func (s *session) remember(round int, counts []int64) error {
	b, err := wire.Marshal(counts)
	if err != nil {
		return err
	}
	if err := s.p.Secrets().WriteSecret(s.viewName(round), b); err != nil {
		return fmt.Errorf("party %s: keep the counts of round %d: %w", s.p.Self(), round, err)
	}
	s.mu.Lock()
	s.views[round] = counts
	s.mu.Unlock()
	return nil
}

// view returns the pooled counts this party received in a round, and
// whether it received any.
func (s *session) view(round int) ([]int64, bool, error) {
	s.mu.Lock()
	c, ok := s.views[round]
	s.mu.Unlock()
	if ok {
		return c, true, nil
	}
	b, err := s.p.Secrets().ReadSecret(s.viewName(round))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("party %s: read the counts it kept of round %d: %w", s.p.Self(), round, err)
	}
	if err := wire.Unmarshal(b, &c); err != nil {
		return nil, false, fmt.Errorf("party %s: the counts it kept of round %d are unreadable: %w", s.p.Self(), round, err)
	}
	s.mu.Lock()
	s.views[round] = c
	s.mu.Unlock()
	return c, true, nil
}

// vouch checks one committed round's counts before this party replays
// them for step: they must be the counts it received from the root; when
// it received none, it must not be named a voucher, and some party other
// than the round's coordinator must be. The refusal names this party, the
// step, the coordinator and the round, never a count.
func (s *session) vouch(step job.Step, rec *job.Record, d *decision) error {
	coordinator := cmp.Or(rec.Coordinator, rec.Step.Coordinator)
	refuse := func(why string) error {
		return fmt.Errorf("party %s refuses %s round %d: coordinator %s committed counts for round %d %s",
			s.p.Self(), step.Phase, step.Round, coordinator, rec.Step.Round, why)
	}
	for _, v := range d.Vouched {
		if !slices.Contains(rec.Step.Parties, v) {
			return refuse("vouched for by a member outside the round")
		}
	}
	mine, ok, err := s.view(rec.Step.Round)
	switch {
	case err != nil:
		return err
	case ok && !slices.Equal(mine, d.Counts):
		return refuse("that differ from those the root sent it")
	case ok:
		return nil
	case slices.Contains(d.Vouched, s.p.Self()):
		return refuse("as vouched for by this party, which received none")
	case !slices.ContainsFunc(d.Vouched, func(v string) bool { return v != coordinator }):
		return refuse("that no party but the coordinator vouched for")
	}
	return nil
}
