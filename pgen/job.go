package pgen

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/tree"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: pgen`.
type Kind struct{}

// publishRound is the job's one step of its own, after the joint seed's
// two (seed-commit and seed-reveal, job.JointSeed): every party publishes
// its ATP-pruned tree; the decision is the published trees.
var publishRound = job.Round[publishArgs, publishOutput, publishDecision]{Phase: "publish"}

// publishArgs carries nothing: a party takes everything from the spec.
type publishArgs struct{}

// publishOutput is a party's published tree, in result.json's tree format.
type publishOutput struct {
	Tree []byte `msgpack:"tree"`
}

// publishDecision is every party's published tree, in party order.
type publishDecision struct {
	Trees []published `msgpack:"trees"`
}

type published struct {
	Party string `msgpack:"party"`
	Tree  []byte `msgpack:"tree"`
}

// Validate checks the spec (parse), naming the bad field.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parse(spec)
	return err
}

// OutputDisclosure: a party's output is its published tree, every path
// of which holds at least release_k rows; the log gives it to every member.
// In the joint seed's steps it is a commitment or an opening, random and
// public (the log holds it).
func (Kind) OutputDisclosure(step job.Step) wire.Disclosure {
	if job.IsSeedStep(step) {
		return wire.DisclosePublicResult
	}
	return wire.DiscloseGeneralised
}

// jointSeed is the draw of the seed of the pseudo-rows: one, round 0, over
// every party.
func jointSeed(jobID string, spec *job.Spec) job.JointSeed {
	return job.NewJointSeed(jobID, 0, spec.PartyNames())
}

// Coordinate draws the joint seed, runs the publish step, checks every
// published tree, and builds the global tree from them and the joint seed
// (Global).
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	cfg, err := parse(c.Spec())
	if err != nil {
		return nil, err
	}
	parties := c.Spec().PartyNames()
	seed, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, cfg.p.TimeoutMS)
	if err != nil {
		return nil, fmt.Errorf("pgen: %w", err)
	}
	call := job.Call[publishArgs]{Parties: parties, TimeoutMS: cfg.p.TimeoutMS}
	done, err := publishRound.Run(ctx, c, call, func(o *job.Outcome[publishOutput]) (publishDecision, error) {
		var d publishDecision
		if err := o.Err(); err != nil {
			return d, err
		}
		for _, p := range parties {
			out, ok := o.Results[p]
			if !ok {
				return d, fmt.Errorf("pgen: party %s published no tree", p)
			}
			if _, err := checkTree(out.Tree, cfg, p); err != nil {
				return d, err
			}
			d.Trees = append(d.Trees, published{Party: p, Tree: out.Tree})
		}
		return d, nil
	})
	if err != nil {
		return nil, err
	}
	trees := make([]*tree.Tree, len(done.Decision.Trees))
	for i, pt := range done.Decision.Trees {
		if trees[i], err = checkTree(pt.Tree, cfg, pt.Party); err != nil {
			return nil, err
		}
	}
	global, rows := Global(trees, cfg.schema, cfg.p.grow(), seed)
	res, err := result(global, rows, trees, done.Decision, cfg.p.release())
	if err != nil {
		return nil, err
	}
	res["joint_seed"] = hex.EncodeToString(seed)
	if cfg.p.NaiveBayes {
		res["naive_bayes"] = GlobalBayes(trees, cfg.schema, seed)
	}
	if cfg.p.RandomForest != nil {
		f := GlobalForest(trees, cfg.schema, *cfg.p.RandomForest, cfg.p.grow(), seed)
		if err := checkForestSize(f, maxForestJSON); err != nil {
			return nil, err
		}
		res["random_forest"] = f
	}
	if cfg.p.DecisionTable {
		res["decision_table"] = GlobalTable(trees, cfg.schema, seed)
	}
	if cfg.p.ConjunctiveRule {
		res["conjunctive_rule"] = GlobalRule(trees, cfg.schema, seed)
	}
	return res, nil
}

// Global is what the coordinator builds from the published trees: PGEN's
// pseudo-rows (Generate, drawn from seed, the joint seed every party
// contributed to, so that no coordinator chooses them and every member can
// rebuild them from the log), and the tree grown on them (never
// splitting on == Other; its splits name no party or table: they are on
// the common schema). It returns the tree and the number of pseudo-rows.
func Global(trees []*tree.Tree, s *Schema, p tree.GrowParams, seed []byte) (*tree.Tree, int) {
	d := pseudoRows(trees, s, seed)
	p.NoSplit = Other
	return tree.Grow(d, p, "", ""), d.Rows()
}

// pseudoRows are PGEN's rows from the published trees, drawn from the
// joint seed.
func pseudoRows(trees []*tree.Tree, s *Schema, seed []byte) *tree.Data {
	return Generate(trees, s, job.Rand(seed, "pgen/pseudo-data"))
}

// checkTree decodes a published tree and checks it against the spec: its
// splits are the party's table's, on schema attributes with their kind's
// operator; each internal node's counts are its children's sums; every
// leaf holds release_k rows; a multiway split, on a categorical attribute,
// only with params.multiway. Errors name the party and what is wrong,
// never a value.
func checkTree(b []byte, cfg *config, party string) (*tree.Tree, error) {
	t := &tree.Tree{}
	var err error
	if cfg.p.Multiway {
		t, err = tree.UnmarshalMultiway(b)
	} else {
		err = t.UnmarshalJSON(b)
	}
	if err != nil {
		if errors.Is(err, tree.ErrMultiway) {
			return nil, fmt.Errorf("pgen: party %s's published tree: %w without params.multiway", party, tree.ErrMultiway)
		}
		return nil, fmt.Errorf("pgen: party %s's published tree: %w", party, tree.ErrFormat) // its detail may quote the bytes
	}
	bad := func(format string, args ...any) error {
		return fmt.Errorf("pgen: party %s's published tree: "+format, append([]any{party}, args...)...)
	}
	var walk func(n *tree.Node) error
	walk = func(n *tree.Node) error {
		if n.IsLeaf() {
			if !cfg.p.release().Holds(n.Counts) {
				return bad("a leaf does not meet params.release_k and params.release_l")
			}
			return nil
		}
		s := n.Split
		numeric, ok := cfg.schema.Numeric[s.Column]
		switch {
		case s.Party != party || s.Table != cfg.tables[party]:
			return bad("a split names another party or table")
		case !ok:
			return bad("a split on a column that is no attribute of the schema")
		case numeric != (s.Op == tree.OpLE):
			return bad("a split on column %q with the other kind's operator", s.Column)
		}
		sums := make([]uint64, len(n.Counts))
		for _, ch := range n.Children() {
			for c, x := range ch.Counts {
				sums[c] += x
			}
		}
		if !slices.Equal(sums, n.Counts) {
			return bad("a node's class counts are not its children's sums")
		}
		for _, ch := range n.Children() {
			if err := walk(ch); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(t.Root); err != nil {
		return nil, err
	}
	return t, nil
}

// result is the job's public result: the global tree, and each party's
// published tree with its anonymity.
func result(global *tree.Tree, rows int, trees []*tree.Tree, d publishDecision, req tree.Requirement) (job.Result, error) {
	gv, err := treeValue(global)
	if err != nil {
		return nil, err
	}
	nodes, leaves := global.Size()
	var local []map[string]any
	pub := map[string]any{}
	for i, t := range trees {
		party := d.Trees[i].Party
		if pub[party], err = treeValue(t); err != nil {
			return nil, err
		}
		n, l := t.Size()
		var total uint64
		for _, c := range t.Root.Counts {
			total += c
		}
		var c any
		if x := t.DiversityC(2); !math.IsInf(x, 1) {
			c = x
		}
		local = append(local, map[string]any{"party": party, "rows": total, "nodes": n, "leaves": l,
			"k": t.PathK(), "diversity_c2": c})
	}
	return job.Result{
		"labels": global.Labels, "tree": gv, "nodes": nodes, "leaves": leaves, "pseudo_rows": rows,
		"release": map[string]any{"k": req.K, "l": req.L, "c": req.C}, "published": pub, "local": local,
	}, nil
}

// treeValue is a tree as a plain value for the result (maps and slices).
func treeValue(t *tree.Tree) (any, error) {
	b, err := t.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var v any
	return v, json.Unmarshal(b, &v)
}

// Open opens a party's session: it keeps nothing but its contribution to
// the joint seed (in its Secrets, job.JointSeed); its publish step reads
// the table, grows, prunes and publishes.
func (Kind) Open(_ context.Context, p job.Participant) (job.Session, error) {
	cfg, err := parse(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, cfg: cfg, js: jointSeed(p.JobID(), p.Spec())}, nil
}

type session struct {
	p   job.Participant
	cfg *config
	js  job.JointSeed
}

func (s *session) Close() {}

// Step takes part in the joint seed's two steps, then publishes the
// party's tree, once: the log determines that pgen's own step is publish
// round 0, after the joint seed is drawn, and a party refuses any other (a
// coordinator asking again would learn nothing new, but the party does not
// serve it), and refuses to publish until the log holds a joint seed its
// own contribution is in, so the pseudo-rows are never the coordinator's
// choice. Before it reads its table for the tree, the party asks its
// policy for one of its dataset's synthetic releases (Guard.Synthetic).
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	published := slices.ContainsFunc(publishRound.History(s.p.History()), func(r *job.Record) bool { return r.Error == "" })
	if job.IsSeedStep(step) && !published {
		return s.js.Serve(s.p, step)
	}
	if step.Phase != publishRound.Phase || step.Round != 0 {
		return nil, fmt.Errorf("pgen: party %s refuses step %s/%d of coordinator %s: pgen has the joint seed's two steps, then one step, publish round 0", s.p.Self(), step.Phase, step.Round, step.Coordinator)
	}
	if published {
		return nil, fmt.Errorf("pgen: party %s refuses coordinator %s: the log holds its tree published already", s.p.Self(), step.Coordinator)
	}
	if _, err := s.js.Seed(s.p); err != nil {
		return nil, fmt.Errorf("pgen: party %s refuses step %s/%d of coordinator %s: %w", s.p.Self(), step.Phase, step.Round, step.Coordinator, err)
	}
	return publishRound.Serve(step, func(publishArgs) (publishOutput, error) {
		// A tree of the same rows under other params (release_k, depth)
		// has other paths, and paths of two trees intersect: each job's
		// tree counts against the dataset's synthetic releases, as kde's
		// samples do, a job once whatever its re-runs.
		if err := s.p.Guard().Synthetic(step, s.cfg.tables[s.p.Self()]); err != nil {
			return publishOutput{}, fmt.Errorf("pgen: party %s: %w", s.p.Self(), err)
		}
		tables, err := job.LoadTables(ctx, s.p)
		if err != nil {
			return publishOutput{}, err
		}
		t := tables[0]
		d, err := FromTable(t, s.cfg.schema)
		if err != nil {
			return publishOutput{}, err
		}
		tr := tree.Grow(d, s.cfg.p.grow(), s.p.Self(), t.Name)
		if _, err := tr.PruneTo(s.cfg.p.release()); err != nil {
			return publishOutput{}, fmt.Errorf("pgen: party %s: params.release_k, params.release_l: table %s as a whole does not meet them", s.p.Self(), t.Name)
		}
		b, err := tr.MarshalJSON()
		return publishOutput{Tree: b}, err
	})
}
