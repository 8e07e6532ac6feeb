package boost

import (
	"fmt"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/psi"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/wire"
)

// Kind is the distributed job, `kind: boost` (see the package doc's
// "Distributed job" section for its steps and leakage profile).
// Coordinate (coordinate.go) drives its rounds (rounds.go) on the leader;
// a session (session.go, level.go) runs them at each party.
type Kind struct {
	// GroupRows says whether each table is read as its binned groups, each
	// weighted by its rows (grouped.go): a database computes the bins and
	// groups where the data lives, and the party holds the groups, not the
	// rows. The model and every message are the same either way. By
	// default (GroupAuto) the party chooses per table from a cheap
	// estimate; a node may fix it (node.yaml boost_group_rows).
	GroupRows GroupMode
	// LatticeCacheBytes caps, in bytes, the plaintexts W this node keeps
	// for a job's lattice bin sums, over all its tables in the job
	// (kept_weights.go): they spare W's NTT at later levels and trees for
	// memory. 0: DefaultLatticeCacheBytes; -1: none kept. A node setting
	// (node.yaml boost_lattice_cache_bytes), not a param: the memory is
	// the node's, each node may set its own, and the model and every
	// message are the same whatever the cap.
	LatticeCacheBytes int64
	// downPart bounds the encodings in one part of a lattice down
	// message (0: partBytes); tests lower it so that small cases' down
	// messages come in several parts (lattice_pipe.go). The messages'
	// contents are the same whatever it is.
	downPart int
	// layoutNodes caps a lattice layout's nodes (0: layoutNodes' choice);
	// tests lower it so that small cases' levels take several layouts.
	// The model is the same whatever it is.
	layoutNodes int
}

// Message types of the job, each sent within one step attempt on a
// sub-channel of it, so that messages of different levels, attempts or
// edges never answer each other.
const (
	// TypeCombos carries a ComboSummary up an edge (disclosure
	// split-summary).
	TypeCombos = "boost/combo-summary"
	// TypeGradients carries a down summary of encrypted gradient and
	// hessian sums down an edge (disclosure ciphertext).
	TypeGradients = "boost/gradient-ciphertext"
	// TypeBins carries a party's encrypted bin sums to the class holder
	// (disclosure ciphertext).
	TypeBins = "boost/bin-sums"
	// TypeDigest carries, to every decryptor, the digest and number of the
	// bin sums a party sent the class holder (disclosure control), so that
	// a decryptor shares only what the parties sent.
	TypeDigest = "boost/digest"
	// TypeSplit tells a party, from the class holder, which of its
	// features and bins won the level's open nodes (disclosure score).
	TypeSplit = "boost/split"
)

// ModelSecret is the name, in each party's data dir, of the party's part of
// the model trained by job id: its split predicates by table and ordinal,
// and at the class holder the trees' skeletons and leaf weights.
func ModelSecret(id string) string { return "models/" + id + "/boost.json" }

// UsesThresholdKey: the class holder's gradients travel under the
// consortium's threshold Paillier key, or its lattice key
// (params.backend; job.KeyUser).
func (Kind) UsesThresholdKey() bool { return true }

// Validate checks the join graph and the params of a spec.
func (Kind) Validate(spec *job.Spec) error {
	_, _, err := parseSpec(spec)
	return err
}

func parseSpec(spec *job.Spec) (*joinprop.Graph, Params, error) {
	p, err := ParseParams(spec)
	if err != nil {
		return nil, p, err
	}
	if err := spec.CheckTimeoutMS(p.TimeoutMS); err != nil {
		return nil, p, err
	}
	if _, err := psiMode(spec, p.PSI); err != nil {
		return nil, p, err
	}
	g, err := joinprop.NewGraph(spec)
	if err != nil {
		return nil, p, fmt.Errorf("%w: %s: %w", job.ErrSpec, spec.Source, err)
	}
	if err := g.CheckTests(spec); err != nil {
		return nil, p, err
	}
	if p.Backend == BackendLattice && CheckStar(g) != nil {
		return nil, p, spec.Errorf("params.backend", "lattice needs every table joined directly to the class holder's")
	}
	return g, p, nil
}

// psiMode reads params.psi ("" is the default, auto).
func psiMode(spec *job.Spec, s string) (psi.Mode, error) {
	if s == "" {
		return psi.ModeAuto, nil
	}
	m, err := psi.ParseMode(s)
	if err != nil {
		return 0, spec.Errorf("params.psi", "want auto, ot, vole or ecdh")
	}
	return m, nil
}

// OutputDisclosure: every step's output is what the coordinator commits
// (the positive label, a level's winning tables, the released model).
func (Kind) OutputDisclosure(job.Step) wire.Disclosure { return wire.DisclosePublicResult }

// Uses declares what a boost job discloses of a party's data
// (job.Discloser): its join keys into a PSI with each neighbouring party
// and as the join values of the combo summaries sent to them (the
// encrypted sums sent down name the same shared values: a split summary's
// disclosure of the key); its attributes as split outcomes (combo summaries), as
// encrypted bin sums that the class holder decrypts (its gains follow:
// score), and as the winning table of a split in the log (on the lattice
// path with the number of bins of the party's widest column); the class
// column as encrypted gradients and the split choices sent to the
// winners; with params.reuse, the class holder's down messages also name
// the open node of their entries (split-summary, to its neighbours). On
// the lattice path (params.backend lattice or auto) the encrypted bin sums
// also go to the decryptors, who make their decryption shares from them.
func (Kind) Uses(spec *job.Spec, party string) ([]job.Use, error) {
	g, p, err := parseSpec(spec)
	if err != nil {
		return nil, err
	}
	all := spec.PartyNames()
	var out []job.Use
	for i, t := range g.Tables {
		if t.Party != party {
			continue
		}
		peers := g.NeighbourParties(i)
		holder := []string{g.Tables[0].Party}
		binsTo := holder
		if p.Backend != BackendPaillier {
			binsTo = g.PartiesBut(party) // the lattice path: the class holder and the decryptors
		}
		for _, c := range t.Columns {
			switch c.Kind {
			case table.Key:
				out = append(out,
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DisclosePSIBlinded, To: peers},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleKey, Form: wire.DiscloseSplitSummary, To: peers})
			case table.Class:
				out = append(out,
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleClass, Form: wire.DiscloseCiphertext, To: peers, Parties: all},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleClass, Form: wire.DiscloseScore, To: g.PartiesBut(party)})
				if p.Reuse {
					out = append(out, job.Use{Table: t.Name, Column: c.Name, Role: job.RoleClass, Form: wire.DiscloseSplitSummary, To: peers})
				}
			case table.Numeric:
				out = append(out,
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseSplitSummary, To: peers},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseCiphertext, To: binsTo, Parties: all},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseScore, To: holder},
					job.Use{Table: t.Name, Column: c.Name, Role: job.RoleAttribute, Form: wire.DiscloseSplitAttribute})
			}
		}
	}
	return out, nil
}
