package console

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
)

// Warnings is a slog.Handler that keeps the node's last warnings and errors
// for the console's node view and passes every record on, unchanged, to
// the handler it wraps. It keeps them whatever level the wrapped handler
// logs at, so a node started with its logs discarded still shows them.
type Warnings struct {
	next   slog.Handler
	prefix string  // the groups opened with WithGroup, as "g1.g2."
	attrs  []field // attributes added with WithAttrs
	ring   *ring   // shared by every handler derived from this one
}

// Warning is one kept record.
type Warning struct {
	Time    time.Time
	Level   string
	Message string
	// Fields are the record's attributes, "key=value" each.
	Fields []string
}

type field struct{ key, value string }

// NewWarnings wraps next and keeps the last keep warnings and errors.
func NewWarnings(next slog.Handler, keep int) *Warnings {
	return &Warnings{next: next, ring: &ring{buf: make([]Warning, max(keep, 1))}}
}

// Enabled reports whether the record is kept here or logged by next.
func (w *Warnings) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn || w.next.Enabled(ctx, l)
}

// Handle keeps warnings and errors, and passes the record on if next logs
// its level.
func (w *Warnings) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		fields := make([]string, 0, len(w.attrs)+r.NumAttrs())
		for _, f := range w.attrs {
			fields = append(fields, f.key+"="+f.value)
		}
		r.Attrs(func(a slog.Attr) bool {
			for _, f := range flatten(w.prefix, a) {
				fields = append(fields, f.key+"="+f.value)
			}
			return true
		})
		w.ring.add(Warning{Time: r.Time.UTC(), Level: r.Level.String(), Message: r.Message, Fields: fields})
	}
	if w.next.Enabled(ctx, r.Level) {
		return w.next.Handle(ctx, r)
	}
	return nil
}

// WithAttrs returns a handler that adds as to every record.
func (w *Warnings) WithAttrs(as []slog.Attr) slog.Handler {
	c := *w
	c.next = w.next.WithAttrs(as)
	c.attrs = slices.Clone(w.attrs)
	for _, a := range as {
		c.attrs = append(c.attrs, flatten(w.prefix, a)...)
	}
	return &c
}

// WithGroup returns a handler that puts later attributes in group name.
func (w *Warnings) WithGroup(name string) slog.Handler {
	if name == "" {
		return w
	}
	c := *w
	c.next = w.next.WithGroup(name)
	c.prefix = w.prefix + name + "."
	return &c
}

// Recent returns the kept warnings, newest first.
func (w *Warnings) Recent() []Warning {
	if w == nil {
		return nil
	}
	return w.ring.recent()
}

// flatten writes an attribute (a group's members each) as key=value fields.
func flatten(prefix string, a slog.Attr) []field {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		var out []field
		for _, g := range v.Group() {
			out = append(out, flatten(prefix, g)...)
		}
		return out
	}
	if a.Equal(slog.Attr{}) {
		return nil
	}
	s := v.String()
	if strings.ContainsAny(s, " \t\n\"=") {
		s = strings.Join(strings.Fields(s), " ")
		s = `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
	}
	return []field{{prefix + a.Key, s}}
}

// ring is a fixed-size buffer of the last warnings.
type ring struct {
	mu   sync.Mutex
	buf  []Warning
	next int // where the next warning goes
	full bool
}

func (r *ring) add(w Warning) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.buf[r.next] = w
	r.next = (r.next + 1) % len(r.buf)
	if r.next == 0 {
		r.full = true
	}
}

func (r *ring) recent() []Warning {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := r.next
	if r.full {
		n = len(r.buf)
	}
	out := make([]Warning, 0, n)
	for i := 1; i <= n; i++ {
		out = append(out, r.buf[(r.next-i+len(r.buf))%len(r.buf)])
	}
	return out
}
