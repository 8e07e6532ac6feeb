package console

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
)

// Warnings keeps the last warnings and errors with their attributes
// (groups and With included), whatever the wrapped handler's level, and
// passes every record on unchanged.
func TestWarningsKeepsTheLastWarnings(t *testing.T) {
	var out bytes.Buffer
	w := NewWarnings(slog.NewTextHandler(&out, &slog.HandlerOptions{Level: slog.LevelError}), 3)
	lg := slog.New(w).With("node", "org1")
	lg.Info("started")
	lg.Warn("first", "peer", "org2")
	lg.WithGroup("raft").Warn("second", "err", "timed out after 5s")
	lg.Error("third")
	lg.Warn("fourth", slog.Group("g", "k", 1))
	got := w.Recent()
	if len(got) != 3 {
		t.Fatalf("kept %d warnings, want 3: %+v", len(got), got)
	}
	want := []struct{ msg, fields string }{
		{"fourth", "node=org1 g.k=1"},
		{"third", "node=org1"},
		{"second", `node=org1 raft.err="timed out after 5s"`},
	}
	for i, w := range want {
		if got[i].Message != w.msg || strings.Join(got[i].Fields, " ") != w.fields {
			t.Errorf("warning %d: %q %q, want %q %q", i, got[i].Message, got[i].Fields, w.msg, w.fields)
		}
	}
	if got[1].Level != "ERROR" || got[0].Level != "WARN" {
		t.Errorf("levels %s %s", got[0].Level, got[1].Level)
	}
	// The wrapped handler logs at error only: it saw "third" alone.
	if s := out.String(); !strings.Contains(s, "msg=third") || strings.Contains(s, "first") || strings.Contains(s, "started") {
		t.Errorf("the wrapped handler got:\n%s", s)
	}
	var none *Warnings
	if none.Recent() != nil {
		t.Error("a nil Warnings has warnings")
	}
}
