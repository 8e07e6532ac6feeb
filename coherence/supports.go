package coherence

import (
	"io"
	"slices"
	"strings"
)

// Supports is what Theorem 3 asks of a database, counted before it is
// loaded: how many transactions it has and how many hold each item (its
// label as the file or table spells it, a repeated item counted once per
// transaction).
type Supports struct {
	N     int
	Items map[string]int
}

// CountFIMI counts a FIMI file's transactions and supports with
// ReadFIMI's parser and its errors, keeping one entry per item.
func CountFIMI(r io.Reader) (*Supports, error) {
	c := newSupportCounter()
	if err := readFIMI(r, c); err != nil {
		return nil, err
	}
	return c.supports(), nil
}

// CountCSV counts a `tid,item` file's transactions and supports with
// ReadCSV's parser and its errors, keeping one entry per transaction id
// and per item. A transaction whose rows are apart (another's between
// them) would need every pair kept to count a repeated one once: then
// the answer is nil, and only loading the file tells.
func CountCSV(r io.Reader) (*Supports, error) {
	c := newSupportCounter()
	c.tids = map[string]struct{}{}
	if err := readCSV(r, c); err != nil {
		return nil, err
	}
	if c.apart {
		return nil, nil
	}
	return c.supports(), nil
}

// supportCounter is a transSink that counts instead of keeping.
type supportCounter struct {
	n     int
	sup   map[string]int
	last  map[string]int // per item, the transaction (1-based) it was last counted in
	tids  map[string]struct{}
	cur   string // the CSV transaction in progress
	apart bool
}

func newSupportCounter() *supportCounter {
	return &supportCounter{sup: map[string]int{}, last: map[string]int{}}
}

func (c *supportCounter) begin() { c.n++ }

func (c *supportCounter) add(label string) error {
	if c.last[label] == c.n {
		return nil
	}
	if _, ok := c.last[label]; !ok && len(c.last) >= MaxItems {
		return errTooManyItems
	}
	label = strings.Clone(label)
	c.last[label] = c.n
	c.sup[label]++
	return nil
}

func (c *supportCounter) pair(tid, item string) error {
	if tid == "" {
		return errFieldTID
	}
	if c.n == 0 || tid != c.cur {
		if _, seen := c.tids[tid]; seen {
			c.apart = true
			return nil
		}
		c.cur = strings.Clone(tid)
		c.tids[c.cur] = struct{}{}
		c.begin()
	}
	if item == "" || c.apart {
		return nil
	}
	return c.add(item)
}

func (c *supportCounter) supports() *Supports { return &Supports{N: c.n, Items: c.sup} }

// Eligible applies Theorem 3 to counted supports, before any transaction
// is loaded: the database has fewer than k transactions (ErrTooFew), or a
// private item the roles name occurs in more than a fraction h of them
// (ErrBreachEmpty). It answers nil when it cannot tell: the thesis's
// private items are made per transaction (ThesisPrivates), so only n is
// tested then, and roles Label refuses are left for Label to name. A nil
// answer is not a verdict: the algorithms test the loaded database again
// (newProblem counts its supports itself, over the labelled database,
// whose thesis items the counts here cannot hold), so the counts only
// ever refuse early what the load would refuse later.
func Eligible(s *Supports, spec RoleSpec, prm Params) error {
	if err := prm.check(); err != nil || spec.check() != nil {
		return nil
	}
	if s.N < prm.K {
		return ErrTooFew
	}
	if spec.ThesisRule || slices.ContainsFunc(spec.Public, func(l string) bool { return slices.Contains(spec.Private, l) }) {
		return nil
	}
	for _, l := range spec.Private {
		if prm.breaches(s.Items[l], s.N) {
			return ErrBreachEmpty
		}
	}
	return nil
}
