package tree

import (
	"errors"
	"testing"
)

// TestRegNodeJSON: a regression tree's JSON, read back, and malformed
// forms refused.
func TestRegNodeJSON(t *testing.T) {
	n := &RegNode{Split: &Split{Party: "bob", Table: "A", Column: "u", Op: OpLE, Num: 2.5},
		Left: &RegNode{Weight: -0.25}, Right: &RegNode{Weight: 0.125}}
	b, err := n.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"split":{"party":"bob","table":"A","column":"u","op":"<=","value":2.5},"left":{"leaf":-0.25},"right":{"leaf":0.125}}`
	if string(b) != want {
		t.Fatalf("got %s\nwant %s", b, want)
	}
	var back RegNode
	if err := back.UnmarshalJSON(b); err != nil {
		t.Fatal(err)
	}
	if b2, _ := back.MarshalJSON(); string(b2) != want {
		t.Fatalf("read back %s", b2)
	}
	for _, bad := range []string{`{"leaf":1,"left":{"leaf":1}}`, `{"split":{"party":"p","table":"t","column":"c","op":"==","value":"x"},"left":{"leaf":1},"right":{"leaf":2}}`, `{"split":{"party":"p","table":"t","column":"c","op":"<=","value":1},"left":{"leaf":1}}`, `{}`} {
		if err := back.UnmarshalJSON([]byte(bad)); !errors.Is(err, ErrFormat) {
			t.Fatalf("%s: %v", bad, err)
		}
	}
}
