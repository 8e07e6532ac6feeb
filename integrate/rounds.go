package integrate

import (
	"fmt"
	"math"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// The job's rounds, typed as job.Round: each names its public args, one
// party's output (to the coordinator alone) and the committed decision;
// package job encodes all three strictly. No-argument rounds take none.
// Mondrian's output and decision types are in mondrian.go.
var (
	schemaRound  = job.Round[none, schemaOutput, schemaDecision]{Phase: phaseSchema}
	alignRound   = job.Round[none, alignOutput, alignDecision]{Phase: phaseAlign}
	scoreRound   = job.Round[none, scoreOutput, winner]{Phase: phaseScore}
	splitRound   = job.Round[splitArgs, Split, Split]{Phase: phaseSplit}
	publishRound = job.Round[none, publishOutput, publishDecision]{Phase: phasePublish}
	proposeRound = job.Round[none, proposeOutput, cutChoices]{Phase: phasePropose}
	cutRound     = job.Round[cutChoices, cutOutput, cutDecision]{Phase: phaseCut}
	checkRound   = job.Round[none, checkOutput, checkDecision]{Phase: phaseCheck}
	labelsRound  = job.Round[none, labelsOutput, publishDecision]{Phase: phasePublish} // Mondrian's publish
)

// none is the args of a round that takes none.
type none struct{}

// schemaOutput is a party's report of its table's shape: its published
// columns in table order and the digest of the taxonomies it loaded.
type schemaOutput struct {
	Columns   []string `msgpack:"columns"`
	TaxDigest []byte   `msgpack:"tax_digest"`
	// HoldsSensitive: the party's table has the sensitive column (when it
	// is not the shared class).
	HoldsSensitive bool `msgpack:"holds_sensitive"`
}

// schemaDecision is committed after the schema step: the attributes in
// their public order (owner by name, then the owner's table order, so that
// the tie rule of TDS, smaller party then attribute, is the attribute
// order).
type schemaDecision struct {
	Attrs []Attr `msgpack:"attrs"`
	// SensitiveOwner is the party that holds the sensitive column when it
	// is not the shared class ("" otherwise).
	SensitiveOwner string `msgpack:"sensitive_owner"`
}

// alignOutput is a party's report after the id alignment: the size of the
// common intersection and two digests that must agree across parties.
type alignOutput struct {
	Records int `msgpack:"records"`
	// ClassDigest is SHA-256 of the class labels in aligned order: every
	// party holds the class, and they must hold the same.
	ClassDigest []byte `msgpack:"class_digest"`
	// IDDigest is SHA-256 of the common ids in aligned order: parties whose
	// PSI runs did not agree (a party restarted in the middle of one) find
	// different sets, and the coordinator says so instead of going on.
	IDDigest []byte `msgpack:"id_digest"`
}

// Attr is one published, generalised column and the party that owns it.
type Attr struct {
	Name  string `msgpack:"name" json:"name"`
	Owner string `msgpack:"owner" json:"owner"`
}

// alignDecision is committed after the alignment: how many records every
// party holds.
type alignDecision struct {
	Records int `msgpack:"records"`
}

// scoreOutput is a party's share of a round: its best candidate (an
// attribute index, a node of that attribute's taxonomy, the score), or none.
// InfoGain and AnonyLoss are not sent (the less the
// coordinator sees, the better).
type scoreOutput struct {
	Found bool    `msgpack:"found"`
	Attr  int     `msgpack:"attr"`
	Node  int     `msgpack:"node"`
	Score float64 `msgpack:"score"`
}

func (o *scoreOutput) check(nattrs int) error {
	if !o.Found {
		return nil
	}
	if o.Attr < 0 || o.Attr >= nattrs || o.Node < 0 || math.IsNaN(o.Score) || math.IsInf(o.Score, 0) {
		return fmt.Errorf("%w: candidate attribute %d node %d score %v", wire.ErrMalformed, o.Attr, o.Node, o.Score)
	}
	return nil
}

// winner is the committed decision of a score round: which party's
// specialisation won (no score: the log does not need it).
type winner struct {
	Found bool   `msgpack:"found"`
	Party string `msgpack:"party"`
	Attr  int    `msgpack:"attr"`
	Node  int    `msgpack:"node"`
}

// check verifies a committed winner against the schema: the attribute is
// the winning party's.
func (w *winner) check(attrs []Attr) error {
	if w.Found && (w.Attr < 0 || w.Attr >= len(attrs) || attrs[w.Attr].Owner != w.Party || w.Node < 0) {
		return fmt.Errorf("%w: winner %s attribute %d node %d", wire.ErrMalformed, w.Party, w.Attr, w.Node)
	}
	return nil
}

// splitArgs asks the winner for the split of its node.
type splitArgs struct {
	Attr int `msgpack:"attr"`
	Node int `msgpack:"node"`
}

// Split is the compact, committed form of a SplitInstruction: for every
// record generalised to Node (in ascending aligned index), the position of
// its child among the node's children, Width bytes big-endian each. Every
// party knows which records are at the node, so this is all it needs to
// refine the partition (Wang, Fung and Dong's "SSN lists per child partition").
type Split struct {
	Attr  int    `msgpack:"attr"`
	Node  int    `msgpack:"node"`
	Width int    `msgpack:"width"`
	Child []byte `msgpack:"child"`
}

// check verifies what the encoder guarantees (a split is committed by the
// coordinator from the winner's output, and read by every party).
func (s *Split) check() error {
	if s.Attr < 0 || s.Node < 0 || (s.Width != 1 && s.Width != 2) || len(s.Child)%s.Width != 0 {
		return fmt.Errorf("integrate: split: %w: attribute %d node %d width %d, %d bytes", wire.ErrMalformed, s.Attr, s.Node, s.Width, len(s.Child))
	}
	return nil
}

// child returns the child position of the i-th record at the node.
func (s *Split) child(i int) int {
	if s.Width == 1 {
		return int(s.Child[i])
	}
	return int(s.Child[2*i])<<8 | int(s.Child[2*i+1])
}

// len is the number of records the split moves.
func (s *Split) len() int { return len(s.Child) / s.Width }

// publishOutput is a party's view of the final table and its NCP (every
// party computes both from the public state: the generalisation is public,
// the class shared, and NCP's denominators are the taxonomies', which are in
// the spec; the coordinator checks that they agree).
type publishOutput struct {
	Table anonymize.Published `msgpack:"table"`
	NCP   float64             `msgpack:"ncp"`
	// Reddy are seed 003's measures per requirement (reddy.go), from the
	// publication and the public taxonomies (TDS only).
	Reddy []Reddy `msgpack:"reddy,omitempty"`
}

// publishDecision is the committed publication.
type publishDecision struct {
	Table     anonymize.Published `msgpack:"table"`
	NCP       float64             `msgpack:"ncp"`
	MinGroups []int               `msgpack:"min_groups"`
	Reddy     []Reddy             `msgpack:"reddy,omitempty"`
}
