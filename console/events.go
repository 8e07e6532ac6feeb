package console

import (
	"fmt"
	"net/http"
	"time"
)

// Live updates. A page with live parts (data-live) opens one server-sent
// event stream; the console sends "change" when the node's jobs change
// and "tick" every tickEvery (running jobs' clocks and progress), and the
// page's script fetches the page again and swaps its live parts. Events
// are at most one per minGap, so a busy node costs each open page a few
// renders a second at most. A stream ends after streamLife (the browser
// reconnects by itself), when the session ends, or when the node stops.
const (
	tickEvery  = 2 * time.Second
	minGap     = 300 * time.Millisecond
	streamLife = 5 * time.Minute
)

func (c *Console) events(w http.ResponseWriter, r *http.Request, s *session) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	fmt.Fprint(w, "retry: 2000\n\n")
	fl.Flush()
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	end := time.NewTimer(min(streamLife, time.Until(s.expires)))
	defer end.Stop()
	for {
		changed := c.node.JobsChanged()
		var ev string
		select {
		case <-r.Context().Done():
			return
		case <-c.node.Done():
			return
		case <-end.C:
			return
		case <-changed:
			ev = "change"
		case <-tick.C:
			ev = "tick"
		}
		if _, ok := c.session(r); !ok { // signed out elsewhere
			return
		}
		if _, err := fmt.Fprintf(w, "event: %s\ndata: %d\n\n", ev, time.Now().UnixMilli()); err != nil {
			return
		}
		fl.Flush()
		select {
		case <-r.Context().Done():
			return
		case <-time.After(minGap):
		}
	}
}
