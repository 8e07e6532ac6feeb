package profile

import (
	"errors"
	"strings"
	"testing"
)

func TestParseDocuments(t *testing.T) {
	docs, err := ParseDocuments(strings.NewReader(" a, b ,a,,\r\n\n  \nc\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 2 || strings.Join(docs[0], "|") != "a|b" || strings.Join(docs[1], "|") != "c" {
		t.Errorf("docs %q", docs)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no documents"},
		{"a\nb/c\n", `line 2: a term holds "/"`},
		{"a\nb\x1b[31m\n", "line 2: a term holds a control character"},
		{"a\n\xff\n", "line 2: a term holds a control character or is not UTF-8"},
		{strings.Repeat("x", MaxLine+1), "line 1: longer than"},
	} {
		_, err := ParseDocuments(strings.NewReader(tc.in))
		if !errors.Is(err, ErrDocuments) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.20q: %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "b/c") {
			t.Errorf("the error echoes the input: %v", err)
		}
	}
}

func TestParseResults(t *testing.T) {
	res, err := ParseResults(strings.NewReader("2, a, b, a\n\n1,\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 || res[0].Rank != 2 || strings.Join(res[0].Terms, "|") != "a|b|a" || res[1].Rank != 1 || len(res[1].Terms) != 0 {
		t.Errorf("results %+v", res)
	}
	for _, tc := range []struct{ in, want string }{
		{"", "no results"},
		{"x,a\n", "line 1: the rank is not an integer"},
		{"0,a\n", "line 1: the rank is not an integer"},
		{"1,a\n2,b\n1,c\n", "line 3: the rank repeats line 1's"},
		{"1,a/b\n", `line 1: a term holds "/"`},
	} {
		_, err := ParseResults(strings.NewReader(tc.in))
		if !errors.Is(err, ErrResults) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.in, err, tc.want)
		}
	}
}

func TestReadProfileRejects(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{``, "ends early"},
		{`{"label":"","sup":1,"secret":"x"}`, "a field other than"},
		{`{"label":"","sup":"x"}`, `field "sup" has the wrong type`},
		{`{"label":"","sup":1} {}`, "data after the profile"},
		{`{"label":"a","sup":1}`, "the root has a label"},
		{`{"label":"","sup":0}`, "root's sup"},
		{`{"label":"","sup":1,"children":[null]}`, "root.children[0] is null"},
		{`{"label":"","sup":1,"children":[{"label":"a//b","sup":1}]}`, "root.children[0]'s label"},
		{`{"label":"","sup":1,"children":[{"label":"a","sup":2}]}`, "root.children[0]'s sup"},
		{`{"label":"","sup":2,"children":[{"label":"a","sup":2,"children":[{"label":"b","sup":1},{"label":"c","sup":1.5}]}]}`, "sups of root.children[0]'s children"},
		{`{"label":"","sup":1,"children":[{"label":"a","sup":-1}]}`, "must be positive"},
		{`{"label":"","sup":1}x`, "data after the profile"},
	} {
		_, err := ReadProfile(strings.NewReader(tc.in))
		if !errors.Is(err, ErrProfile) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.in, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("the error echoes the input: %v", err)
		}
	}
}
