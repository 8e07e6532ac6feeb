package table

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// LineLimit passes a file of at most MaxRows lines after the skipped
// ones, with or without a last newline, and refuses one more line with
// Open's refusal; without MaxRows it reads everything.
func TestLineLimit(t *testing.T) {
	for _, c := range []struct {
		text      string
		max, skip int
		ok        bool
	}{
		{"h\na\nb\n", 2, 1, true}, {"h\na\nb", 2, 1, true}, {"h\na\nb\nc", 2, 1, false},
		{"a\nb\n", 2, 0, true}, {"a\nb\n\n", 2, 0, false}, {"", 1, 0, true}, {"a\nb\nc\n", 0, 0, true},
	} {
		l := NewLineLimit(iotest.OneByteReader(strings.NewReader(c.text)), Source{Path: "x.csv", MaxRows: int64(c.max)}, c.skip, "x.csv")
		got, err := io.ReadAll(l)
		if c.ok != (err == nil) || c.ok && string(got) != c.text {
			t.Errorf("%q max %d skip %d: %q, %v", c.text, c.max, c.skip, got, err)
		}
		if !c.ok && (!errors.Is(err, ErrTooLarge) || l.Err != err || !strings.Contains(err.Error(), "max_table_rows")) {
			t.Errorf("%q: %v, want Open's refusal", c.text, err)
		}
	}
}
