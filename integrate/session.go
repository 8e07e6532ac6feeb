package integrate

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"maps"
	"slices"
	"sort"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Open opens a party's session. It holds nothing it could not rebuild: the
// party's table and the taxonomies are read at its first step, its aligned
// rows from the file the alignment left it (Secrets), and the TDS state from
// the committed decisions, so a session opened after a restart is the same
// as one that ran from the start.
func (Kind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, prm: prm}, nil
}

// session is one party's state for one job.
type session struct {
	p   job.Participant
	prm *Params
	tab *table.Table
	tax map[string]*anonymize.Taxonomy
	ids [][]byte // encoded id of every row
	al  *aligned
	log *logged // the log as read so far
	st  *tdsState
	ms  *mondrianState
}

// Close drops the party's data.
func (s *session) Close() {
	s.tab, s.tax, s.ids, s.al, s.log, s.st, s.ms = nil, nil, nil, nil, nil, nil, nil
}

// Step runs one step, once it has checked that the step is the one the log
// determines (see replay.go).
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if s.log == nil {
		s.log = newLog(s.p.Spec().PartyNames())
	}
	if err := s.log.fold(s.prm, s.p.Spec().PartyNames(), s.p.History()); err != nil {
		return nil, fmt.Errorf("party %s refuses %s round %d: %w (coordinator %s)", s.p.Self(), step.Phase, step.Round, err, step.Coordinator)
	}
	if err := s.log.admit(s.p.Self(), step); err != nil {
		return nil, err
	}
	switch {
	case step.Phase == phaseSchema:
		return schemaRound.Serve(step, func(none) (schemaOutput, error) { return s.schema(ctx, step) })
	case step.Phase == phaseAlign:
		return alignRound.Serve(step, func(none) (alignOutput, error) { return s.align(ctx, step) })
	case s.prm.Algorithm == algMondrian:
		return s.mondrianStep(ctx, step)
	case step.Phase == phaseScore:
		return scoreRound.Serve(step, func(none) (scoreOutput, error) { return s.score(ctx, step) })
	case step.Phase == phaseSplit:
		return splitRound.Serve(step, func(a splitArgs) (Split, error) { return s.split(ctx, step, a) })
	}
	return publishRound.Serve(step, func(none) (publishOutput, error) {
		st, err := s.catchUp(ctx)
		if err != nil {
			return publishOutput{}, err
		}
		o := publishOutput{Table: st.pub.Publication(st.class, s.prm.Class), NCP: st.pub.NCP()}
		if o.Reddy, err = reddyScores(o.Table, s.prm.Requirements, s.tax); err != nil {
			return publishOutput{}, fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
		// every requirement and the class's model, on the publication the
		// log determines, before any of it leaves
		if err := checkPublication(&publishDecision{Table: o.Table}, s.prm); err != nil {
			return publishOutput{}, fmt.Errorf("party %s refuses publish round %d: coordinator %s committed splits whose publication breaks a requirement: %w",
				s.p.Self(), step.Round, step.Coordinator, err)
		}
		return o, nil
	})
}

// schema loads the party's table and reports its shape, once the policy
// lets the columns published value by value (the class, and a sensitive
// column the party holds) leave: none may single out its rows.
func (s *session) schema(ctx context.Context, step job.Step) (schemaOutput, error) {
	if err := s.load(ctx); err != nil {
		return schemaOutput{}, err
	}
	for _, name := range []string{s.prm.Class, s.prm.Sensitive} {
		c, err := s.tab.Column(name)
		if name == "" || err != nil || name == s.prm.Sensitive && !s.prm.private() {
			continue
		}
		pub := job.Publication{Table: s.tab.Name, Column: name, Rows: c.Len(), Unique: job.UniqueValues(c.Str)}
		if err := s.p.Guard().Publish(step, pub); err != nil {
			return schemaOutput{}, err
		}
	}
	o := schemaOutput{Columns: []string{}, TaxDigest: taxonomyDigest(slices.Sorted(maps.Keys(s.tax)), s.tax)}
	for _, c := range s.tab.Columns {
		switch {
		case s.prm.private() && c.Name == s.prm.Sensitive:
			o.HoldsSensitive = true
		case c.Name != s.prm.ID && c.Name != s.prm.Class:
			o.Columns = append(o.Columns, c.Name)
		}
	}
	return o, nil
}

// score is a party's TDS round: its best valid and beneficial
// specialisation on the state the log determines, remembered for the
// split step that may follow.
func (s *session) score(ctx context.Context, step job.Step) (scoreOutput, error) {
	st, err := s.catchUp(ctx)
	if err != nil {
		return scoreOutput{}, err
	}
	c, ok := st.best(step.Round)
	if !ok {
		return scoreOutput{}, nil
	}
	return scoreOutput{Found: true, Attr: c.Attr, Node: c.Node, Score: c.Score}, nil
}

// split is the winner's TDS round: the split of its node, once it has
// checked that the committed winner (the args, which admit compared with
// the log) is its own best candidate of the round. A coordinator that
// commits another node as this party's, to read its values under a node
// that did not win, is refused.
func (s *session) split(ctx context.Context, step job.Step, a splitArgs) (Split, error) {
	st, err := s.catchUp(ctx)
	if err != nil {
		return Split{}, err
	}
	if c, ok := st.best(step.Round); !ok || c.Attr != a.Attr || c.Node != a.Node {
		return Split{}, fmt.Errorf("party %s refuses split round %d: coordinator %s committed attribute %d node %d as its candidate, which it did not propose",
			s.p.Self(), step.Round, step.Coordinator, a.Attr, a.Node)
	}
	return st.split(a.Attr, a.Node)
}

// load reads the party's table and every taxonomy of the spec (all of them:
// every party publishes, and checks, every column), and checks the table:
// an id column with distinct values, the class column, a taxonomy covering
// every value of every other column. Errors name the table and column but
// never a value: they reach the coordinator and the log.
func (s *session) load(ctx context.Context) error {
	if s.tab != nil {
		return nil
	}
	spec := s.p.Spec()
	tables, err := job.LoadTables(ctx, s.p)
	if err != nil {
		return err
	}
	t := tables[0]
	tax := map[string]*anonymize.Taxonomy{}
	for _, col := range slices.Sorted(maps.Keys(spec.Taxonomies)) {
		src, err := s.p.TableSource(job.TableSpec{Name: "taxonomy " + col, Path: spec.Taxonomies[col]})
		if err != nil {
			return fmt.Errorf("party %s: taxonomy of column %q: %w", s.p.Self(), col, err)
		}
		if src.Path == "" {
			return fmt.Errorf("party %s: taxonomy of column %q is not a file", s.p.Self(), col)
		}
		if tax[col], err = anonymize.LoadTaxonomy(src.Path, col); err != nil {
			return fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
	}
	if _, err := t.Column(s.prm.ID); err != nil {
		return fmt.Errorf("%w: party %s table %s has no id column %q (params.id)", anonymize.ErrRequirement, s.p.Self(), t.Name, s.prm.ID)
	}
	ids, err := psi.TableKeys(t, []string{s.prm.ID}, []psi.Type{psi.Text})
	if err != nil {
		return fmt.Errorf("party %s table %s: %w", s.p.Self(), t.Name, err)
	}
	distinct := map[string]bool{}
	for _, k := range ids {
		distinct[string(k)] = true
	}
	if len(distinct) != len(ids) {
		return fmt.Errorf("%w: party %s table %s: id column %q repeats values (%d rows, %d distinct ids)", anonymize.ErrRequirement, s.p.Self(), t.Name, s.prm.ID, len(ids), len(distinct))
	}
	all := make([]int, t.NumRows())
	for i := range all {
		all[i] = i
	}
	if _, err := alignTable(t, all, s.prm.ID, s.prm.Class, s.privateCol(), tax); err != nil {
		return fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	s.tab, s.tax, s.ids = t, tax, ids
	return nil
}

// alignedFile is what the alignment leaves a party to keep (Secrets): its
// rows whose id every party holds, in aligned order, and a digest of those
// ids, so a table changed since is noticed.
type alignedFile struct {
	Rows   []int  `msgpack:"rows"`
	Digest []byte `msgpack:"digest"`
}

// privateCol is the sensitive column when one party holds it, else "".
func (s *session) privateCol() string {
	if s.prm.private() {
		return s.prm.Sensitive
	}
	return ""
}

func (s *session) secretName() string { return "integrate/" + s.p.JobID() + "/aligned" }

func idDigest(ids [][]byte, rows []int) []byte {
	h := sha256.New()
	for _, r := range rows {
		fmt.Fprintf(h, "%d:", len(ids[r]))
		h.Write(ids[r])
	}
	return h.Sum(nil)
}

// align runs the PSI star on the record ids (psi.Align), orders the common
// records by encoded id (every party holds the same ids, so every party
// gets the same order) and keeps the result.
func (s *session) align(ctx context.Context, step job.Step) (alignOutput, error) {
	if err := s.load(ctx); err != nil {
		return alignOutput{}, err
	}
	res, err := psi.Align(ctx, s.p, step, s.prm.Hub, step.Parties, psi.Config{Edge: psiEdge, Mode: s.prm.psiMode}, s.ids)
	if err != nil {
		return alignOutput{}, fmt.Errorf("party %s: align record ids: %w", s.p.Self(), err)
	}
	rows := slices.Clone(res.Indices)
	sort.Slice(rows, func(i, j int) bool { return bytes.Compare(s.ids[rows[i]], s.ids[rows[j]]) < 0 })
	b, err := wire.Marshal(&alignedFile{Rows: rows, Digest: idDigest(s.ids, rows)})
	if err != nil {
		return alignOutput{}, err
	}
	if err := s.p.Secrets().WriteSecret(s.secretName(), b); err != nil {
		return alignOutput{}, fmt.Errorf("party %s: keep the alignment: %w", s.p.Self(), err)
	}
	al, err := alignTable(s.tab, rows, s.prm.ID, s.prm.Class, s.privateCol(), s.tax)
	if err != nil {
		return alignOutput{}, fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	s.al, s.st, s.ms = al, nil, nil
	return alignOutput{Records: len(rows), ClassDigest: classDigest(al.class), IDDigest: idDigest(s.ids, rows)}, nil
}

// alignedRows makes sure the party holds its aligned table: the alignment
// its align step kept, or after a restart the one it kept in Secrets.
func (s *session) alignedRows(ctx context.Context) error {
	if s.al != nil {
		return nil
	}
	if err := s.load(ctx); err != nil {
		return err
	}
	b, err := s.p.Secrets().ReadSecret(s.secretName())
	if err != nil {
		return fmt.Errorf("party %s: the alignment this node kept: %w", s.p.Self(), err)
	}
	var f alignedFile
	if err := wire.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("party %s: the alignment this node kept: %w", s.p.Self(), err)
	}
	for _, r := range f.Rows {
		if r < 0 || r >= len(s.ids) {
			return fmt.Errorf("party %s: the alignment this node kept names row %d of %d: the table changed since", s.p.Self(), r, len(s.ids))
		}
	}
	if !bytes.Equal(idDigest(s.ids, f.Rows), f.Digest) {
		return fmt.Errorf("party %s: table %s changed since the record ids were aligned", s.p.Self(), s.tab.Name)
	}
	if s.al, err = alignTable(s.tab, f.Rows, s.prm.ID, s.prm.Class, s.privateCol(), s.tax); err != nil {
		return fmt.Errorf("party %s: %w", s.p.Self(), err)
	}
	return nil
}

// catchUp brings the TDS state up to the log: the alignment, the committed
// schema, and every committed split not yet applied (each checked to keep
// the requirements, see tdsState.apply).
func (s *session) catchUp(ctx context.Context) (*tdsState, error) {
	l := s.log
	if l.sd == nil || l.ad == nil {
		return nil, fmt.Errorf("party %s: the log holds no committed schema and alignment", s.p.Self())
	}
	if err := s.alignedRows(ctx); err != nil {
		return nil, err
	}
	if s.st == nil {
		if err := checkSchema(s.p.Self(), l.sd, s.al, s.prm.private()); err != nil {
			return nil, fmt.Errorf("party %s refuses the schema coordinator %s committed: %w", s.p.Self(), l.by0, err)
		}
		st, err := newState(s.p.Self(), s.al, l.ad.Records, l.sd.Attrs, s.prm, s.tax)
		if err != nil {
			return nil, fmt.Errorf("party %s: %w", s.p.Self(), err)
		}
		s.st = st
	}
	for _, sp := range l.splits[s.st.splits:] {
		if err := s.st.apply(&sp); err != nil {
			return nil, fmt.Errorf("party %s refuses split round %d, which coordinator %s committed: %w", s.p.Self(), s.st.splits, l.by[s.st.splits], err)
		}
	}
	return s.st, nil
}
