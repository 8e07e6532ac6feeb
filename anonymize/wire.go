package anonymize

import (
	"fmt"
	"math"

	"github.com/cohortdm/cohort/wire"
)

// Wire forms of the TDS shares, for the integrate job (STYLE habit 2): msgpack
// through wire.Marshal, decoded strictly, then checked for what the
// encoder guarantees. Semantic checks against the public state (is the node
// in the cut, does the instruction cover its records) are Apply's.

type wireCandidate struct {
	Party     string  `msgpack:"party"`
	Attr      int     `msgpack:"attr"`
	Node      int     `msgpack:"node"`
	Score     float64 `msgpack:"score"`
	InfoGain  float64 `msgpack:"info_gain"`
	AnonyLoss float64 `msgpack:"anony_loss"`
}

// MarshalBinary encodes a candidate (a party's round share).
func (c Candidate) MarshalBinary() ([]byte, error) {
	return wire.Marshal(wireCandidate(c))
}

// UnmarshalBinary decodes a candidate; negative ids and non-finite scores
// are refused (wire.ErrMalformed).
func (c *Candidate) UnmarshalBinary(b []byte) error {
	var w wireCandidate
	if err := wire.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("anonymize: candidate: %w", err)
	}
	for _, f := range []float64{w.Score, w.InfoGain, w.AnonyLoss} {
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("anonymize: candidate: %w: non-finite score", wire.ErrMalformed)
		}
	}
	if w.Attr < 0 || w.Node < 0 {
		return fmt.Errorf("anonymize: candidate: %w: negative attribute or node", wire.ErrMalformed)
	}
	*c = Candidate(w)
	return nil
}

type wireSplit struct {
	Attr     int       `msgpack:"attr"`
	Node     int       `msgpack:"node"`
	Children []int     `msgpack:"children"`
	Records  [][]int32 `msgpack:"records"`
}

// MarshalBinary encodes a split instruction (the winner's message to the others).
func (s SplitInstruction) MarshalBinary() ([]byte, error) {
	return wire.Marshal(wireSplit(s))
}

// UnmarshalBinary decodes a split instruction; one record list per child is required.
func (s *SplitInstruction) UnmarshalBinary(b []byte) error {
	var w wireSplit
	if err := wire.Unmarshal(b, &w); err != nil {
		return fmt.Errorf("anonymize: split instruction: %w", err)
	}
	if w.Attr < 0 || w.Node < 0 || len(w.Children) != len(w.Records) {
		return fmt.Errorf("anonymize: split instruction: %w: %d children, %d record lists", wire.ErrMalformed, len(w.Children), len(w.Records))
	}
	*s = SplitInstruction(w)
	return nil
}
