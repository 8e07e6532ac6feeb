package node

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
)

func testRaftLogger(level slog.Level, quiet func() bool) (*raftLogger, *bytes.Buffer) {
	var buf bytes.Buffer
	l := newRaftLogger(slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: level})), quiet)
	return l, &buf
}

func lines(buf *bytes.Buffer) []string {
	return strings.FieldsFunc(buf.String(), func(r rune) bool { return r == '\n' })
}

// Raft's failures to reach a peer are one-line warnings, one per peer and
// message per raftLogEvery; the next one says how many were held back.
func TestRaftLoggerRateLimitsPeerFailures(t *testing.T) {
	t.Parallel()
	l, buf := testRaftLogger(slog.LevelWarn, nil)
	l.limit.every = time.Hour
	dialErr := errors.New("failed to dial: all dials failed\n  * [/ip4/127.0.0.1/tcp/1] connection refused\n  * [/ip4/127.0.0.1/udp/1/quic-v1] timeout")
	for i := 0; i < 5; i++ {
		l.Error("failed to make requestVote RPC", "target", "{Voter org2 X}", "error", dialErr, "term", i)
		l.Error("failed to make requestVote RPC", "target", "{Voter org3 Y}", "error", dialErr, "term", i)
	}
	l.limit.every = 0 // the interval has passed
	l.Error("failed to make requestVote RPC", "target", "{Voter org2 X}", "error", dialErr, "term", 9)
	got := lines(buf)
	if len(got) != 3 {
		t.Fatalf("%d lines, want 3:\n%s", len(got), buf)
	}
	for _, line := range got[:2] {
		if !strings.Contains(line, "level=WARN") || !strings.Contains(line, "connection refused; * [/ip4/127.0.0.1/udp/1/quic-v1] timeout") {
			t.Errorf("line %q: want a warning with the dial error on one line", line)
		}
	}
	if !strings.Contains(got[2], "repeated=4") || !strings.Contains(got[2], "term=9") {
		t.Errorf("line %q: want term 9 with repeated=4", got[2])
	}
}

func TestRaftLoggerLevels(t *testing.T) {
	t.Parallel()
	var closing atomic.Bool
	l, buf := testRaftLogger(slog.LevelInfo, closing.Load)
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "", "last-leader-id", "")
	l.Warn("heartbeat timeout reached, starting election", "last-leader-addr", "x", "last-leader-id", "org1")
	l.Warn("Election timeout reached, restarting election")
	l.Error("failed to take snapshot", "error", "disk full")
	l.Debug("accepted connection")
	closing.Store(true)
	l.Error("failed to decode incoming command", "error", "transport shutdown")
	want := []string{
		"level=INFO msg=\"raft: heartbeat timeout reached, starting election\"",
		"level=WARN msg=\"raft: heartbeat timeout reached, starting election\"",
		"level=INFO msg=\"raft: Election timeout reached, restarting election\"",
		"level=ERROR msg=\"raft: failed to take snapshot\"",
	}
	got := lines(buf)
	if len(got) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), buf)
	}
	for i := range want {
		if !strings.Contains(got[i], want[i]) {
			t.Errorf("line %d: %q, want %s", i, got[i], want[i])
		}
	}
	if l.GetLevel() != hclog.Info || l.IsDebug() || !l.IsInfo() {
		t.Errorf("level %v", l.GetLevel())
	}
	closing.Store(false)
	named := l.Named("net").With("peer", "org2")
	named.Info("hello")
	if last := lines(buf)[len(lines(buf))-1]; !strings.Contains(last, "logger=raft.net") || !strings.Contains(last, "peer=org2") {
		t.Errorf("named logger line %q", last)
	}
}
