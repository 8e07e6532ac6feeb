package strictyaml

import (
	"errors"
	"io"
	"strings"
	"testing"
)

type config struct {
	Name  string `yaml:"name"`
	Bytes int64  `yaml:"bytes"`
	Rows  []int  `yaml:"rows"`
}

// Every way a file can be wrong gives an error naming where (a line, a
// field or a type) and never the value written there.
func TestDecodeNeverRepeatsAValue(t *testing.T) {
	const secret = "hunter2-secret-value"
	cases := map[string]struct{ doc, want string }{
		"a string for a number":   {"name: a\nbytes: " + secret + "\n", "line 2"},
		"a string in a list":      {"rows: [1, " + secret + "]\n", "line 1"},
		"a syntax error":          {"name: \"" + secret + "\n", "line"},
		"a mapping for a string":  {"name: {" + secret + ": 1}\n", "line 1"},
		"a tab before a value":    {"name:\t" + secret + "\n  bytes: [\n", "line"},
		"a value cut in an error": {"bytes: " + strings.Repeat(secret, 5) + "\n", "int64"},
	}
	for name, c := range cases {
		var v config
		err := Decode(strings.NewReader(c.doc), &v)
		if err == nil {
			t.Errorf("%s: decoded", name)
			continue
		}
		t.Logf("%s: %v", name, err)
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %q repeats the value", name, err)
		}
		if !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %q does not say %q", name, err, c.want)
		}
	}
}

// An unknown field's name is the file's own key and is kept when it is
// not a value: "not found in type" must still say which.
func TestDecodeNamesAnUnknownField(t *testing.T) {
	var v config
	err := Decode(strings.NewReader("name: a\ncolour: red\n"), &v)
	if err == nil || !strings.Contains(err.Error(), "colour") {
		t.Fatalf("%v", err)
	}
}

func TestDecodeEmptyAndValid(t *testing.T) {
	var v config
	if err := Decode(strings.NewReader(""), &v); !errors.Is(err, io.EOF) {
		t.Fatalf("empty: %v", err)
	}
	if err := Decode(strings.NewReader("name: a\nbytes: 7\nrows: [1, 2]\n"), &v); err != nil || v.Name != "a" || v.Bytes != 7 || len(v.Rows) != 2 {
		t.Fatalf("%+v %v", v, err)
	}
}
