package profile

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
)

// WriteJSON writes the profile as indented JSON.
func (n *Node) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(n); err != nil {
		return fmt.Errorf("profile: write: %w", err)
	}
	return nil
}

// inputError describes bad input without quoting it; the decoder's error,
// which may, stays reachable through Unwrap.
type inputError struct {
	msg string
	err error
}

func (e *inputError) Error() string { return e.msg }
func (e *inputError) Unwrap() error { return e.err }

// ReadProfile reads a profile as WriteJSON writes it and checks that it is
// one Build could have made: a root without label and with positive
// support, labelled children whose labels are valid terms joined by "/",
// and children whose supports, each positive, sum to at most their
// parent's.
func ReadProfile(r io.Reader) (*Node, error) {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	var root Node
	if err := dec.Decode(&root); err != nil {
		return nil, decodeError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, &inputError{msg: ErrProfile.Error() + ": data after the profile", err: ErrProfile}
	}
	if root.Label != "" {
		return nil, fmt.Errorf("%w: the root has a label", ErrProfile)
	}
	if !(root.Sup > 0) || math.IsInf(root.Sup, 0) {
		return nil, fmt.Errorf("%w: the root's sup must be positive and finite", ErrProfile)
	}
	if err := check(&root, "root", tolerance(root.Sup)); err != nil {
		return nil, err
	}
	return &root, nil
}

// decodeError names what is wrong with the JSON and where, not its text.
func decodeError(err error) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	msg := "not a profile's JSON"
	switch {
	case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
		msg = "the JSON ends early"
	case errors.As(err, &syn):
		msg = fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	case errors.As(err, &typ):
		msg = fmt.Sprintf("field %q has the wrong type", typ.Field)
	case strings.Contains(err.Error(), "unknown field"):
		msg = "a node has a field other than label, sup and children"
	}
	return &inputError{msg: ErrProfile.Error() + ": " + msg, err: errors.Join(ErrProfile, err)}
}

// check validates n's children, path naming n by child indexes.
func check(n *Node, path string, tol float64) error {
	sum := 0.0
	for i, c := range n.Children {
		p := fmt.Sprintf("%s.children[%d]", path, i)
		if c == nil {
			return fmt.Errorf("%w: %s is null", ErrProfile, p)
		}
		if !validLabel(c.Label) {
			return fmt.Errorf("%w: %s's label is not terms joined by \"/\"", ErrProfile, p)
		}
		if !(c.Sup > 0) || c.Sup > n.Sup+tol {
			return fmt.Errorf("%w: %s's sup must be positive and at most its parent's", ErrProfile, p)
		}
		sum += c.Sup
		if err := check(c, p, tol); err != nil {
			return err
		}
	}
	if sum > n.Sup+tol {
		return fmt.Errorf("%w: the sups of %s's children exceed its own", ErrProfile, path)
	}
	return nil
}

func validLabel(l string) bool {
	if l == "" {
		return false
	}
	for t := range strings.SplitSeq(l, "/") {
		if t == "" || t != strings.TrimSpace(t) || !validTerm(t) {
			return false
		}
	}
	return true
}

// tolerance is the rounding slack of supports summing to at most total.
func tolerance(total float64) float64 { return 1e-9 * total }
