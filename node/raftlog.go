package node

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
)

// raftLogEvery is how often one kind of Raft warning about one peer is
// logged while it keeps happening: a node waiting for a peer that is down
// fails an RPC to it every election round or heartbeat.
const raftLogEvery = 30 * time.Second

// raftPeerFailures are Raft's messages about a peer it cannot reach. Raft
// logs them as errors, but a peer being down is the consortium's business
// as usual: they are warnings, one per peer and raftLogEvery.
var raftPeerFailures = []string{
	"failed to make requestVote RPC",
	"failed to make requestPreVote RPC",
	"failed to appendEntries to",
	"failed to heartbeat to",
	"failed to pipeline appendEntries",
	"failed to start pipeline replication to",
	"failed to send snapshot to",
	"failed to install snapshot",
	"failed to contact",
}

// raftRoutine are Raft's warnings that are part of an election running its
// course; they are logged at info.
var raftRoutine = []string{
	"Election timeout reached, restarting election",
	"rejecting vote request since",
	"rejecting pre-vote request since",
	"duplicate requestVote from",
	"pre-vote is disabled",
}

// raftLogger is hashicorp/raft's logger (an hclog.Logger) writing to slog:
// one record per event, its arguments as attributes with multi-line values
// flattened, warnings rate-limited per message and peer, and everything
// demoted to debug once the node is shutting down (failed RPCs are then
// expected).
type raftLogger struct {
	log     *slog.Logger
	name    string
	implied []any
	limit   *logLimiter
	quiet   func() bool
}

func newRaftLogger(lg *slog.Logger, quiet func() bool) *raftLogger {
	return &raftLogger{log: lg, name: "raft", limit: &logLimiter{last: map[string]limitState{}, every: raftLogEvery}, quiet: quiet}
}

var _ hclog.Logger = (*raftLogger)(nil)

func (l *raftLogger) Log(level hclog.Level, msg string, args ...any) {
	lvl := l.level(level, msg, args)
	if l.quiet != nil && l.quiet() {
		lvl = slog.LevelDebug
	}
	ctx := context.Background()
	if !l.log.Enabled(ctx, lvl) {
		return
	}
	all := append(append([]any(nil), l.implied...), args...)
	attrs := make([]any, 0, len(all)+4)
	attrs = append(attrs, slog.String("logger", l.name))
	for i := 0; i < len(all); i += 2 {
		key := fmt.Sprint(all[i])
		if i+1 >= len(all) {
			attrs = append(attrs, slog.String("extra", oneLine(key)))
			break
		}
		attrs = append(attrs, slog.String(key, oneLine(render(all[i+1]))))
	}
	if lvl >= slog.LevelWarn {
		ok, dropped := l.limit.allow(msg + "\x00" + peerOf(all))
		if !ok {
			return
		}
		if dropped > 0 {
			attrs = append(attrs, slog.Int("repeated", dropped))
		}
	}
	l.log.Log(ctx, lvl, "raft: "+msg, attrs...)
}

// level maps a Raft log level to slog's, by what the message means.
func (l *raftLogger) level(level hclog.Level, msg string, args []any) slog.Level {
	if msg == "heartbeat timeout reached, starting election" && argOf(args, "last-leader-id") == "" {
		return slog.LevelInfo // the first election after starting: no leader was lost
	}
	for _, p := range raftPeerFailures {
		if strings.HasPrefix(msg, p) {
			return slog.LevelWarn
		}
	}
	for _, p := range raftRoutine {
		if strings.HasPrefix(msg, p) {
			return slog.LevelInfo
		}
	}
	switch {
	case level >= hclog.Error:
		return slog.LevelError
	case level == hclog.Warn:
		return slog.LevelWarn
	case level == hclog.Info:
		return slog.LevelInfo
	default:
		return slog.LevelDebug
	}
}

// argOf is the value of key among a message's arguments, as text.
func argOf(args []any, key string) string {
	for i := 0; i+1 < len(args); i += 2 {
		if fmt.Sprint(args[i]) == key {
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}

// peerOf is the peer a Raft message is about, for rate limiting.
func peerOf(args []any) string {
	for i := 0; i+1 < len(args); i += 2 {
		switch fmt.Sprint(args[i]) {
		case "peer", "target", "server-id", "candidate", "from":
			return fmt.Sprint(args[i+1])
		}
	}
	return ""
}

func render(v any) string {
	switch x := v.(type) {
	case hclog.Format:
		if len(x) == 0 {
			return ""
		}
		return fmt.Sprintf(fmt.Sprint(x[0]), x[1:]...)
	case error:
		if x == nil {
			return "<nil>"
		}
		return x.Error()
	default:
		return fmt.Sprint(v)
	}
}

// oneLine joins the lines of a multi-line value (libp2p's dial errors list
// every address tried on its own line) with "; ".
func oneLine(s string) string {
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	var parts []string
	for _, line := range strings.FieldsFunc(s, func(r rune) bool { return r == '\n' || r == '\r' }) {
		if line = strings.TrimSpace(line); line != "" {
			parts = append(parts, line)
		}
	}
	return strings.Join(parts, "; ")
}

func (l *raftLogger) Trace(msg string, args ...any) { l.Log(hclog.Trace, msg, args...) }
func (l *raftLogger) Debug(msg string, args ...any) { l.Log(hclog.Debug, msg, args...) }
func (l *raftLogger) Info(msg string, args ...any)  { l.Log(hclog.Info, msg, args...) }
func (l *raftLogger) Warn(msg string, args ...any)  { l.Log(hclog.Warn, msg, args...) }
func (l *raftLogger) Error(msg string, args ...any) { l.Log(hclog.Error, msg, args...) }

func (l *raftLogger) enabled(lvl slog.Level) bool { return l.log.Enabled(context.Background(), lvl) }
func (l *raftLogger) IsTrace() bool               { return false }
func (l *raftLogger) IsDebug() bool               { return l.enabled(slog.LevelDebug) }
func (l *raftLogger) IsInfo() bool                { return l.enabled(slog.LevelInfo) }
func (l *raftLogger) IsWarn() bool                { return l.enabled(slog.LevelWarn) }
func (l *raftLogger) IsError() bool               { return l.enabled(slog.LevelError) }
func (l *raftLogger) ImpliedArgs() []any          { return l.implied }
func (l *raftLogger) Name() string                { return l.name }

func (l *raftLogger) With(args ...any) hclog.Logger {
	c := *l
	c.implied = append(append([]any(nil), l.implied...), args...)
	return &c
}

func (l *raftLogger) Named(name string) hclog.Logger {
	c := *l
	if c.name != "" {
		c.name += "." + name
	} else {
		c.name = name
	}
	return &c
}

func (l *raftLogger) ResetNamed(name string) hclog.Logger {
	c := *l
	c.name = name
	return &c
}

// SetLevel is ignored: the slog handler decides what is logged.
func (l *raftLogger) SetLevel(hclog.Level) {}

func (l *raftLogger) GetLevel() hclog.Level {
	switch {
	case l.IsDebug():
		return hclog.Debug
	case l.IsInfo():
		return hclog.Info
	case l.IsWarn():
		return hclog.Warn
	default:
		return hclog.Error
	}
}

func (l *raftLogger) StandardLogger(*hclog.StandardLoggerOptions) *log.Logger {
	return log.New(l.StandardWriter(nil), "", 0)
}

func (l *raftLogger) StandardWriter(*hclog.StandardLoggerOptions) io.Writer {
	return raftLineWriter{l}
}

// raftLineWriter logs what a standard logger writes, one info record per
// write.
type raftLineWriter struct{ l *raftLogger }

func (w raftLineWriter) Write(p []byte) (int, error) {
	w.l.Info(strings.TrimSpace(string(p)))
	return len(p), nil
}

// logLimiter lets one record per key through every interval and counts the
// ones it holds back, so the next one can say how many there were.
type logLimiter struct {
	mu    sync.Mutex
	every time.Duration
	last  map[string]limitState
}

type limitState struct {
	at      time.Time
	dropped int
}

func (r *logLimiter) allow(key string) (ok bool, dropped int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := time.Now()
	s, seen := r.last[key]
	if seen && now.Sub(s.at) < r.every {
		s.dropped++
		r.last[key] = s
		return false, 0
	}
	if len(r.last) > 1024 { // forget keys that have gone quiet
		for k, v := range r.last {
			if now.Sub(v.at) >= r.every {
				delete(r.last, k)
			}
		}
	}
	r.last[key] = limitState{at: now}
	return true, s.dropped
}
