// Package publish is the `coherence` job: one organisation publishes its
// table of transactions (h,k,p)-coherent by suppressing public items, with
// package coherence (Xu, ch. 4).
//
// Spec: one party with one table of transactions: a FIMI file (any path
// not ending in .csv: one transaction per line, integer items separated by
// spaces), a `tid,item` CSV (path ending in .csv), or any other table
// source with columns tid and item. Params:
//
//	h, k, p                 the privacy parameters (p a positive integer or inf)
//	utility: item|itemset   Tree-Cohesion (IL(v) = Sup(v)) or Border-Cohesion (IL(v) = |N(v)|)
//	algorithm: greedy|rmall|k-anonymizer
//	                        the greedy of the utility, the RmAll baseline, or the thesis's
//	                        QID-based k-Anonymizer (coherence.KAnonymizer: k-anonymity over the
//	                        public items by top-down specialisation; it ignores h and p)
//	k_nugget, p_nugget      the nuggets (a count of at least 2, or a fraction of the transactions; p_nugget
//	                        an integer or inf, default inf): needed by itemset utility, optional otherwise
//	private: [items]        the private items, or
//	private_rule: thesis    the thesis's synthetic private items (coherence.ThesisPrivates)
//	public: [items]         the public items, or
//	public_fraction, seed   a random draw of that fraction of the items that are not private
//	                        (see The public draw: seed varies it, the joint seed decides it)
//	timeout_ms              how long the party may take
//
// Items not private are public unless public or public_fraction says
// otherwise; the others are kept (published, never suppressed, assumed
// unknown to an attacker). The issue names public and public_fraction;
// the design adds private and private_rule: both are supported.
//
// The party runs the algorithm, then verifies its publication with the
// package's independent checker, and only then sends it. The result holds
// the publication (the same transactions in the same order without the
// suppressed items; a CSV's transaction ids are replaced by 1, 2, ...),
// the suppressed items, the loss of items, the minimal moles before
// (moles_before, size-1 moles included: every mole holds one, and all
// moles are too many to count in general) and after (0 but for the
// k-Anonymizer), the guarantee the publication was checked for, the time and,
// with k_nugget, the nuggets before and after and the loss of nuggets.
// `cohort sim` writes the publication to DIR/published.dat in the input's
// format and leaves its name in result.json. With public_fraction the
// result also holds draw_seed (a decimal string): the seed of the draw of
// public items.
//
// # Counts before the load
//
// Before loading any transaction the party counts its table's
// transactions and item supports where the table lives (precheck): a
// CSV or FIMI file with coherence's own parser (CountCSV, CountFIMI:
// memory its items, and a CSV's transaction ids), any other source through
// table's local-computation layer (Aggregator.DistinctCounts: on a database
// two queries, their text in the node's log at debug level, naming tid and
// item alone). When Theorem 3 rules the job out on those counts (fewer
// than k transactions, a private item in more than a fraction h of them:
// coherence.Eligible) the party refuses with the error the algorithms give
// after a load (params.k, params.h), without loading: so before
// max_table_rows is consulted. Otherwise the transactions are loaded as
// before, and the algorithms test the loaded database again; the counts
// are not fed to them (see precheck). Nothing more leaves the party.
//
// # The public draw
//
// With public_fraction, which items are public and which kept is drawn at
// random, and the draw decides whom the publication protects: kept items
// are assumed unknown to an attacker, are never suppressed and take no
// part in moles. Whoever chose the draw could make the items it knows
// kept. The spec's seed alone used to decide it, and any member may submit
// a spec; the job's seed would be the coordinator's alone. So the draw now
// comes from a joint seed (job.JointSeed: the party commits to 32 bytes
// from crypto/rand, kept in its Secrets for the job, and opens them once
// the commitment is in the log; with one party this is the party's own
// randomness, fixed in the log before it is used) mixed with params.seed:
//
//	draw_seed = first 8 bytes, big-endian, of
//	            SHA-256("cohort/coherence/public-draw/v1" ‖ joint seed ‖ seed as 8 bytes big-endian)
//
// used as coherence.RoleSpec.Seed (package coherence's shuffle). Neither
// the spec's author nor the coordinator can choose it. params.seed stays
// (specs that give it still run, and it still varies the draw), but it no
// longer reproduces a job's draw, which is fresh in every job:
// result.json's draw_seed does, with the library (coherence.Label with
// RoleSpec{PublicFraction: f, Seed: draw_seed}), and every member can
// derive it from the log. The thesis's figures (bench_test.go in package
// coherence) use the library's seeded draw directly and are unchanged.
//
// # Leakage profile
//
// Three steps, one party: the joint seed's two (seed-commit and
// seed-reveal: the party's commitment, then its 32 random bytes, each its
// output to the coordinator, recorded as public-result, and committed to
// the log; they tell nothing of the data), then the publication. The
// party's output of that step, sent to the coordinator, is the
// publication and the figures above; the coordinator checks its shape and
// commits it: the publication is the job's public result, and every member
// receives it through the log. Nothing else leaves the party: not the
// suppressed items' occurrences, not a CSV's transaction ids, not which
// items were drawn public beyond what the log (the spec and the joint
// seed) and the publication show. TestLeakage checks this in process,
// TestLeakageNodes over real nodes with a coordinator that is not the
// party (every output, decision and failure, every node's log, both
// ledgers, the coordinator's Raft store), TestBadDataNodes a failure's
// text; TestCoordinatorMustDrawSeedNodes and TestForgedCommitmentNodes play
// the lying coordinator over real nodes (no draw, a commitment in the
// party's name that is not its own): the party refuses, opening nothing.
//
// What the publication can still reveal (coherence package doc): to an
// attacker who knows at most p public items of a person, at least k
// transactions match and no private item is in more than a fraction h of
// them; an attacker who knows more than p public items, or a kept item, or
// the length of a person's transaction, may single it out. The private
// items are published, and so is each one's frequency (at most h of the
// transactions, Theorem 3). The suppressed items are named.
//
// With algorithm: k-anonymizer the publication is what the baseline
// claims, no more: every transaction shares its public items with at
// least k − 1 others (checked by coherence.CheckKAnonymous before it is
// sent), so no public itemset, of any size, has support below k; but a
// private item may be in more than a fraction h of a cohort. The result
// says so: guarantee is k-anonymity, not (h,k,p)-coherence, and
// moles_after counts the minimal moles left (each a breach of h), with
// classes the number of equivalence classes. The messages are the same
// three.
package publish

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/cohortdm/cohort/coherence"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Kind is `kind: coherence`.
type Kind struct{}

const phase = "coherence"

// File is the publication `cohort sim` writes.
const File = "published.dat"

// Validate checks the spec.
func (Kind) Validate(spec *job.Spec) error {
	_, err := parseParams(spec)
	return err
}

// OutputDisclosure: the output is the publication, a public result.
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Coordinate draws the joint seed, runs the publication step and checks
// the publication's shape.
func (Kind) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	prm, err := parseParams(c.Spec())
	if err != nil {
		return nil, err
	}
	party := c.Spec().Parties[0].Name
	joint, err := jointSeed(c.JobID(), c.Spec()).Draw(ctx, c, prm.TimeoutMS)
	if err != nil {
		return nil, fmt.Errorf("coherence: %w", err)
	}
	call := job.Call[struct{}]{Parties: []string{party}, TimeoutMS: prm.TimeoutMS}
	done, err := publishRound.Run(ctx, c, call, func(outs *job.Outcome[output]) (output, error) {
		if why, ok := outs.Failed[party]; ok {
			return output{}, fmt.Errorf("coherence: party %s: %s", party, strings.TrimPrefix(why, "party "+party+": "))
		}
		o := outs.Results[party]
		return o, o.check()
	})
	if err != nil {
		return nil, err
	}
	res := done.Decision.result(prm)
	if prm.PublicFraction != nil {
		res["draw_seed"] = strconv.FormatUint(drawSeed(joint, prm.Seed), 10)
	}
	return res, nil
}

// publishRound is the job's round of its own: the party's publication,
// which is also the public decision.
var publishRound = job.Round[struct{}, output, output]{Phase: phase}

// jointSeed is the job's draw of public randomness: round 0, over the one
// party.
func jointSeed(jobID string, spec *job.Spec) job.JointSeed {
	return job.NewJointSeed(jobID, 0, spec.PartyNames())
}

// drawSeed is the seed of the draw of public items (see the package doc):
// the joint seed mixed with params.seed.
func drawSeed(joint []byte, seed uint64) uint64 {
	h := sha256.New()
	h.Write([]byte("cohort/coherence/public-draw/v1"))
	h.Write(joint)
	h.Write(binary.BigEndian.AppendUint64(nil, seed))
	return binary.BigEndian.Uint64(h.Sum(nil))
}

// Open opens the party's session; it keeps nothing between steps but its
// contribution to the joint seed (in its Secrets), so a restart runs the
// publication again.
func (Kind) Open(_ context.Context, p job.Participant) (job.Session, error) {
	prm, err := parseParams(p.Spec())
	if err != nil {
		return nil, err
	}
	return &session{p: p, prm: prm, js: jointSeed(p.JobID(), p.Spec())}, nil
}

type session struct {
	p   job.Participant
	prm *Params
	js  job.JointSeed
}

func (s *session) Close() {}

// Step takes part in the joint seed's two steps; then, once the log holds
// the joint seed with its own contribution in it (it refuses before,
// naming the coordinator), it loads the transactions, publishes them
// coherent, verifies the publication and returns it with the figures.
func (s *session) Step(ctx context.Context, step job.Step) ([]byte, error) {
	if job.IsSeedStep(step) {
		return s.js.Serve(s.p, step)
	}
	return publishRound.Serve(step, func(struct{}) (output, error) {
		joint, err := s.js.Seed(s.p)
		if err != nil {
			return output{}, fmt.Errorf("coherence: party %s refuses %s round %d: %w (coordinator %s)", s.p.Self(), step.Phase, step.Round, err, step.Coordinator)
		}
		return s.publish(ctx, drawSeed(joint, s.prm.Seed))
	})
}

// publish loads the party's transactions and publishes them coherent; a
// draw of public items is seeded with draw.
func (s *session) publish(ctx context.Context, draw uint64) (output, error) {
	if err := precheck(ctx, s.p, s.prm, draw); err != nil {
		return output{}, err
	}
	db, format, err := load(ctx, s.p)
	if err != nil {
		return output{}, err
	}
	labelled, err := coherence.Label(db, s.prm.roles(draw), format)
	switch {
	case errors.Is(err, coherence.ErrPublicPrivate):
		return output{}, fmt.Errorf("params.public: %w", err)
	case errors.Is(err, coherence.ErrThesisLabels):
		return output{}, fmt.Errorf("params.private_rule: %w", err)
	case err != nil:
		return output{}, fmt.Errorf("params: %w", err)
	}
	o, err := publish(ctx, labelled, format, s.prm)
	if err != nil {
		return output{}, err
	}
	return *o, nil
}

// load reads the party's one table of transactions: a file by its
// extension, any other source as a table of columns tid and item.
func load(ctx context.Context, p job.Participant) (*coherence.Database, coherence.Format, error) {
	ts, src, err := source(p)
	if err != nil {
		return nil, 0, err
	}
	if typ := src.Type(); typ == table.CSV {
		f, err := os.Open(src.Path)
		if err != nil {
			// The failure reaches every member's log: the file by its
			// base name, never the organisation's path.
			return nil, 0, fmt.Errorf("party %s: table %s: %s: %w", p.Self(), ts.Name, table.Label(src), table.WithoutPath(err))
		}
		defer f.Close()
		read, format, header := coherence.ReadFIMI, coherence.FIMI, 0
		if strings.EqualFold(filepath.Ext(src.Path), ".csv") {
			read, format, header = coherence.ReadCSV, coherence.CSV, 1
		}
		// The node's max_table_rows bounds the lines read (a FIMI
		// transaction or a CSV pair each), as Open bounds rows.
		lim := table.NewLineLimit(f, src, header, table.Label(src))
		db, err := read(lim)
		if lim.Err != nil {
			err = lim.Err // without the parser's row number: the limit is the node's
		}
		if err != nil {
			return nil, 0, tableError(p, ts, err)
		}
		return db, format, nil
	}
	t, err := table.Open(ctx, src, ts.Name, pairsSchema, table.ReadOptions{Label: table.Label(src)})
	if err != nil {
		return nil, 0, tableError(p, ts, err)
	}
	tid, err1 := t.Column("tid")
	item, err2 := t.Column("item")
	if err := errors.Join(err1, err2); err != nil {
		return nil, 0, fmt.Errorf("party %s: table %s needs columns tid and item: %w", p.Self(), ts.Name, err)
	}
	db, err := coherence.FromPairs(tid.Str, item.Str)
	if err != nil {
		return nil, 0, fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
	}
	return db, coherence.CSV, nil
}

// source is the party's one table and the source its node maps it to.
func source(p job.Participant) (job.TableSpec, table.Source, error) {
	ps, _ := p.Spec().Party(p.Self())
	if len(ps.Tables) != 1 {
		return job.TableSpec{}, table.Source{}, fmt.Errorf("coherence: party %s is not the job's party", p.Self())
	}
	ts := ps.Tables[0]
	src, err := p.TableSource(ts)
	if err != nil {
		return ts, src, fmt.Errorf("party %s: %w", p.Self(), err)
	}
	return ts, src, nil
}

// pairsSchema is how a table source of transactions is read: its tid and
// item columns, as text, and no other.
var pairsSchema = map[string]table.Kind{"tid": table.Categorical, "item": table.Categorical}

// tableError names the party and table; a table above the node's
// max_table_rows is refused as job.OpenTable refuses one, naming the kind:
// coherence's suppression needs every transaction in memory.
func tableError(p job.Participant, ts job.TableSpec, err error) error {
	if errors.Is(err, table.ErrTooLarge) {
		return fmt.Errorf("party %s: table %s: kind %s loads whole tables into memory: %w", p.Self(), ts.Name, p.Spec().Kind, err)
	}
	return fmt.Errorf("party %s: table %s: %w", p.Self(), ts.Name, err)
}

// publish runs the algorithm the params name, verifies the publication and
// gathers the figures.
func publish(ctx context.Context, db *coherence.Labelled, format coherence.Format, prm *Params) (*output, error) {
	privacy := prm.privacy()
	nug, withNuggets := prm.nuggets(len(db.Trans))
	start := time.Now()
	var res *coherence.Result
	var before, after coherence.Count
	var err error
	var kanon *coherence.KAnonResult
	switch prm.algorithm() {
	case "rmall":
		res, err = coherence.RmAll(ctx, db, privacy)
	case "k-anonymizer":
		if kanon, err = coherence.KAnonymizer(ctx, db, privacy.K); err == nil {
			res = &kanon.Result
		}
	case "border-cohesion":
		var br *coherence.BorderResult
		if br, err = coherence.BorderCohesion(ctx, db, privacy, nug); err == nil {
			res, before, after = &br.Result, br.NuggetsBefore, br.NuggetsAfter
		}
	default:
		res, err = coherence.TreeCohesion(ctx, db, privacy)
	}
	if err := mapEligibility(err); err != nil {
		return nil, err
	}
	seconds := time.Since(start).Seconds()
	pub := res.Publish(db)
	o := &output{Format: format.String(), Algorithm: prm.algorithm(), Transactions: len(db.Trans),
		Occurrences: db.Occurrences(), LossItems: coherence.LossOfItems(db.Database, pub),
		MolesBefore: res.Size1 + res.MinimalMoles, Size1: res.Size1, Seconds: seconds}
	if kanon != nil {
		if err := kanonFigures(ctx, db, pub, privacy, kanon, o); err != nil {
			return nil, err
		}
	} else if err := coherence.Check(ctx, db, pub, privacy); err != nil {
		return nil, fmt.Errorf("coherence: the publication failed the independent check, nothing is published: %w", err)
	}
	for _, v := range res.Suppressed {
		o.Suppressed = append(o.Suppressed, db.Items[v])
	}
	if withNuggets {
		if prm.algorithm() != "border-cohesion" {
			if before, err = coherence.CountNuggets(ctx, db, nil, nug); err != nil {
				return nil, err
			}
			if after, err = coherence.CountNuggets(ctx, db, res.Suppressed, nug); err != nil {
				return nil, err
			}
		}
		o.NuggetsBefore, o.NuggetsAfter = before.String(), after.String()
		o.LossNuggets = coherence.LossOfNuggets(before, after)
	}
	o.Published = compact(pub)
	o.Published.Format = o.Format
	return o, nil
}

// mapEligibility names the param a database without any cohesion fails
// (Theorem 3).
func mapEligibility(err error) error {
	switch {
	case errors.Is(err, coherence.ErrTooFew):
		return fmt.Errorf("params.k: %w", err)
	case errors.Is(err, coherence.ErrBreachEmpty):
		return fmt.Errorf("params.h: %w", err)
	}
	return err
}

// kanonFigures verifies a k-Anonymizer publication against what it claims,
// k-anonymity over the public items, and counts the moles it leaves: its
// minimal moles before and after, with the job's h, k and p. A database
// with no cohesion at all fails as with the other algorithms, so that the
// figures compare.
func kanonFigures(ctx context.Context, db *coherence.Labelled, pub *coherence.Database, privacy coherence.Params, res *coherence.KAnonResult, o *output) error {
	if err := coherence.CheckKAnonymous(db, pub, privacy.K); err != nil {
		return fmt.Errorf("coherence: the publication failed the independent check, nothing is published: %w", err)
	}
	before, err := coherence.MolesLeft(ctx, db, nil, privacy)
	if err := mapEligibility(err); err != nil {
		return err
	}
	after, err := coherence.MolesLeft(ctx, db, res.Suppressed, privacy)
	if err != nil {
		return err
	}
	o.MolesBefore, o.MolesAfter, o.Classes = before, after, res.Classes
	return nil
}

// Assemble writes DIR/published.dat from the committed publication and
// names it in result.json instead of holding it.
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("coherence: result: %w", err)
	}
	var p publication
	if err := json.Unmarshal(res["published"], &p); err != nil {
		return nil, fmt.Errorf("coherence: result field published: %w", err)
	}
	db, format, err := p.database()
	if err != nil {
		return nil, err
	}
	f, err := os.Create(filepath.Join(dir, File))
	if err != nil {
		return nil, err
	}
	if err := db.Write(f, format); err != nil {
		f.Close()
		return nil, fmt.Errorf("coherence: write %s: %w", File, err)
	}
	if err := f.Close(); err != nil {
		return nil, err
	}
	res["published"], _ = json.Marshal(File)
	return json.MarshalIndent(res, "", "  ")
}
