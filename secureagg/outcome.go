package secureagg

import (
	"errors"
	"fmt"
	"math"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// EncodeOutcome turns what Aggregate returned into a step output for the
// coordinator: a Result, or the parties a MissingError names. Any other
// error is returned as is, so the party's step fails with it.
//
// It lets a job's Participate end with
//
//	return secureagg.EncodeOutcome(secureagg.Aggregate(ctx, p, step, cfg, v))
func EncodeOutcome(res *Result, err error) ([]byte, error) {
	var miss *MissingError
	switch {
	case errors.As(err, &miss):
		return protocol.Marshal(outcomeBody{Missing: miss.Parties})
	case err != nil:
		return nil, err
	case res == nil:
		return nil, fmt.Errorf("secureagg: no result to encode")
	}
	return protocol.Marshal(outcomeBody{Sum: res.Sum, Included: res.Included, Excluded: res.Excluded, Noise: res.Noise})
}

// outcomeBody is a step output: a Result, or missing parties.
type outcomeBody struct {
	Sum      []float64         `msgpack:"sum"`
	Included []string          `msgpack:"included"`
	Excluded map[string]string `msgpack:"excluded"`
	Noise    *NoiseReport      `msgpack:"noise"`
	Missing  []string          `msgpack:"missing"`
}

// EncodeReport is EncodeOutcome for a step output that goes to the
// coordinator: only the root's report carries the sum vector, the others
// carry the rest of the outcome (their sum is the root's), so a long vector
// crosses the network once more, not N times.
func EncodeReport(self string, step job.Step, res *Result, err error) ([]byte, error) {
	if err == nil && res != nil && self != Root(step) {
		r := *res
		r.Sum = nil
		res = &r
	}
	return EncodeOutcome(res, err)
}

// DecodeOutcome reverses EncodeOutcome on the coordinator: it returns the
// Result, or a *MissingError to re-run the step without the named parties.
func DecodeOutcome(b []byte) (*Result, error) {
	var r outcomeBody
	if err := protocol.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("secureagg: decode outcome: %w", err)
	}
	if len(r.Missing) > 0 {
		return nil, &MissingError{Parties: r.Missing}
	}
	for _, v := range r.Sum {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil, fmt.Errorf("secureagg: decode outcome: %w: sum holds %v", protocol.ErrMalformed, v)
		}
	}
	return &Result{Sum: r.Sum, Included: r.Included, Excluded: r.Excluded, Noise: r.Noise}, nil
}
