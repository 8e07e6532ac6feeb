// Package strictyaml decodes the YAML files an operator or a user writes
// (node.yaml, policies, job specs, taxonomies) the one way Cohort reads
// them: unknown fields are errors, and an error names where the file is
// wrong (line, field, expected type) but never repeats a value from it.
// A value in such a file may be a table's cell (a spec's filter, a
// taxonomy's label) or a secret someone typed in the wrong field, and the
// error text goes to logs, terminals and the console.
package strictyaml

import (
	"errors"
	"io"
	"regexp"

	"gopkg.in/yaml.v3"
)

// Decode decodes the first YAML document of r into v, refusing fields v
// does not have. It returns io.EOF unwrapped when r holds no document.
func Decode(r io.Reader, v any) error {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	return Redact(dec.Decode(v))
}

// quoted is how yaml.v3 quotes a value in its errors (`value`, cut to a
// few dozen characters with "...").
var quoted = regexp.MustCompile("`[^`]*`")

// Redact returns err with every value yaml.v3 quotes in it replaced by
// "a value"; other errors (and nil) are returned as they are. The line
// numbers, field names and types stay.
func Redact(err error) error {
	if err == nil || errors.Is(err, io.EOF) || !quoted.MatchString(err.Error()) {
		return err // nothing quoted: a reader's error keeps its chain
	}
	var te *yaml.TypeError
	if errors.As(err, &te) {
		out := &yaml.TypeError{Errors: make([]string, len(te.Errors))}
		for i, e := range te.Errors {
			out.Errors[i] = quoted.ReplaceAllString(e, "a value")
		}
		return out
	}
	return redactedError{quoted.ReplaceAllString(err.Error(), "a value")}
}

// redactedError is a syntax error's text with its values taken out.
type redactedError struct{ text string }

func (e redactedError) Error() string { return e.text }
