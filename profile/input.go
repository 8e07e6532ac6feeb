package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Errors for bad input; each wraps the line or field at fault.
var (
	// ErrDocuments is returned for a document list that cannot be read.
	ErrDocuments = errors.New("profile: bad documents")
	// ErrResults is returned for a result list that cannot be read.
	ErrResults = errors.New("profile: bad results")
	// ErrProfile is returned for a profile file that cannot be read.
	ErrProfile = errors.New("profile: bad profile")
	// ErrParams is returned for a parameter out of its range.
	ErrParams = errors.New("profile: bad parameter")
)

// MaxLine bounds one input line, so a file without newlines cannot make a
// reader buffer all of it.
const MaxLine = 1 << 20

// maxRank bounds a result's rank, so PPRank arithmetic stays exact.
const maxRank = 1 << 30

// Result is one search result: the engine's rank and the page's terms,
// one entry per occurrence.
type Result struct {
	Rank  int      `json:"rank"`
	Terms []string `json:"terms"`
}

// ParseDocuments reads one document per line, its terms separated by
// commas and already stemmed; spaces around a term and empty terms are
// dropped, a term repeated in a document counts once, and blank lines are
// no documents.
func ParseDocuments(r io.Reader) ([][]string, error) {
	var docs [][]string
	err := eachLine(r, ErrDocuments, func(line string) error {
		terms, err := splitTerms(line)
		if err != nil {
			return err
		}
		if len(terms) == 0 {
			return nil
		}
		docs = append(docs, dedup(terms))
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("%w: no documents", ErrDocuments)
	}
	return docs, nil
}

// ParseResults reads one result per line: the engine's rank (a positive
// integer, unique), a comma, and the page's terms as in ParseDocuments but
// with repeats kept, since they are the term frequencies.
func ParseResults(r io.Reader) ([]Result, error) {
	var res []Result
	seen := map[int]int{}
	n := 0
	err := eachLine(r, ErrResults, func(line string) error {
		n++
		if strings.TrimSpace(line) == "" {
			return nil
		}
		head, text, _ := strings.Cut(line, ",")
		rank, err := strconv.Atoi(strings.TrimSpace(head))
		if err != nil || rank < 1 || rank > maxRank {
			return fmt.Errorf("the rank is not an integer from 1 to %d", maxRank)
		}
		if first, ok := seen[rank]; ok {
			return fmt.Errorf("the rank repeats line %d's", first)
		}
		seen[rank] = n
		terms, err := splitTerms(text)
		if err != nil {
			return err
		}
		res = append(res, Result{Rank: rank, Terms: terms})
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(res) == 0 {
		return nil, fmt.Errorf("%w: no results", ErrResults)
	}
	return res, nil
}

// eachLine calls f with each line in turn; an error names the line and
// wraps kind.
func eachLine(r io.Reader, kind error, f func(line string) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), MaxLine)
	n := 0
	for sc.Scan() {
		n++
		if err := f(sc.Text()); err != nil {
			return fmt.Errorf("%w: line %d: %w", kind, n, err)
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return fmt.Errorf("%w: line %d: longer than %d bytes: %w", kind, n+1, MaxLine, err)
		}
		return fmt.Errorf("%w: line %d: %w", kind, n+1, err)
	}
	return nil
}

var (
	errSlash   = errors.New(`a term holds "/", which joins merged labels`)
	errControl = errors.New("a term holds a control character or is not UTF-8")
)

// validTerm reports whether t is UTF-8 without control characters, so it
// survives JSON and cannot drive a terminal.
func validTerm(t string) bool {
	if !utf8.ValidString(t) {
		return false
	}
	for _, c := range t {
		if unicode.IsControl(c) {
			return false
		}
	}
	return true
}

// splitTerms splits a line at commas, trimming spaces and dropping empty
// terms.
func splitTerms(line string) ([]string, error) {
	var terms []string
	for t := range strings.SplitSeq(line, ",") {
		t = strings.TrimSpace(t)
		if t == "" {
			continue
		}
		if strings.Contains(t, "/") {
			return nil, errSlash
		}
		if !validTerm(t) {
			return nil, errControl
		}
		terms = append(terms, t)
	}
	return terms, nil
}

// dedup drops repeats, keeping first occurrences in order.
func dedup(terms []string) []string {
	seen := make(map[string]bool, len(terms))
	out := terms[:0]
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
