package console

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// A job's timeline: one bar per step from its latest attempt's start to
// its end, coloured by the attempt's coordinator, with its attempt number
// and failed parties beside it, and a mark wherever the coordinator (the
// Raft leader) changed. The log keeps each step's coordinator while the job
// runs; once it has ended, the coordinator of a step is whom this node sent
// its output (the ledger says), or else the leader this node saw when the
// step started (a coordinator must lead, and the node keeps the leader
// changes it has seen since it started); failing both it is unknown.

// stepRow is one step in the job's table of steps.
type stepRow struct {
	Phase             string
	Round, Attempt    int
	Started, Finished time.Time
	Took              string
	Done              bool
	Failed            []string
	Coordinator       string
}

type timelineChart struct {
	W, H    int
	Rows    []tlRow
	Ticks   []tick
	Marks   []tlMark
	Legend  []legendItem
	AxisY   float64
	X1, X2  float64 // the time axis
	Dropped int     // steps the log no longer keeps
}

type tlRow struct {
	Label        string
	LabelY       float64
	Bar          seg
	Note         string
	NoteX, NoteY float64
}

// tlMark is a leader change: a vertical line and whom it went to.
type tlMark struct {
	X, Y1, Y2, LabelY float64
	Label             string
}

const (
	tLabelW = 130
	tPlotW  = 520
	tNoteW  = 170
	tRowH   = 18
	tTop    = 18
)

// timeline lays out a job's steps; coords are the coordinators the ledger
// knows of, leaders the leader changes this node has seen (oldest first),
// members the consortium (for the colours).
func timeline(js *Job, coords map[stepRef]string, leaders []Event, members []string, now time.Time) (timelineChart, []stepRow) {
	t0, t1 := js.Submitted, js.Finished
	if t1.IsZero() {
		t1 = now
	}
	for _, s := range js.Steps { // clocks of several nodes: keep every bar inside
		if !s.Started.IsZero() && s.Started.Before(t0) {
			t0 = s.Started
		}
		if s.Finished.After(t1) {
			t1 = s.Finished
		}
	}
	span := max(t1.Sub(t0), time.Millisecond)
	x := func(t time.Time) float64 { return tLabelW + float64(t.Sub(t0))/float64(span)*tPlotW }
	c := timelineChart{W: tLabelW + tPlotW + tNoteW, H: tTop + len(js.Steps)*tRowH + 22, Dropped: js.DroppedSteps, X1: tLabelW, X2: tLabelW + tPlotW}
	c.AxisY = float64(tTop + len(js.Steps)*tRowH + 2)
	var rows []stepRow
	var prev string
	seen := map[string]bool{}
	for i, s := range js.Steps {
		var coord string
		if i < len(js.Coordinators) {
			coord = js.Coordinators[i]
		}
		if coord == "" {
			coord = coords[stepRef{s.Phase, s.Round}]
		}
		if coord == "" {
			coord = leaderAt(leaders, s.Started)
		}
		end, class := s.Finished, partyClass(members, coord)
		if coord == "" {
			class = "p-unknown"
		}
		if !s.Done {
			end = now
			class += " open"
		}
		if len(s.Failed) > 0 {
			class += " failed"
		}
		y := float64(tTop + i*tRowH)
		row := tlRow{Label: fmt.Sprintf("%s/%d", s.Phase, s.Round), LabelY: y + 13, NoteY: y + 13}
		x0 := x(s.Started)
		row.Bar = seg{X: x0, Y: y + 3, W: max(x(end)-x0, 2), H: tRowH - 6, Class: class,
			Title: fmt.Sprintf("%s/%d attempt %d: %s, coordinator %s", s.Phase, s.Round, s.Attempt, duration(end.Sub(s.Started)), orUnknown(coord))}
		var notes []string
		if s.Attempt > 1 {
			notes = append(notes, fmt.Sprintf("attempt %d", s.Attempt))
		}
		if len(s.Failed) > 0 {
			notes = append(notes, "failed: "+strings.Join(s.Failed, ", "))
		}
		row.Note, row.NoteX = strings.Join(notes, "; "), tLabelW+tPlotW+6
		c.Rows = append(c.Rows, row)
		if coord != "" {
			if prev != "" && coord != prev {
				c.Marks = append(c.Marks, tlMark{X: x0, Y1: tTop - 4, Y2: c.AxisY, LabelY: tTop - 6, Label: "→ " + coord})
			}
			prev = coord
			if !seen[coord] {
				seen[coord] = true
				c.Legend = append(c.Legend, legendItem{Class: partyClass(members, coord), Label: "coordinator " + coord})
			}
		}
		rows = append(rows, stepRow{Phase: s.Phase, Round: s.Round, Attempt: s.Attempt, Started: s.Started, Finished: s.Finished,
			Took: duration(end.Sub(s.Started)), Done: s.Done, Failed: s.Failed, Coordinator: coord})
	}
	slices.SortFunc(c.Legend, func(a, b legendItem) int { return strings.Compare(a.Label, b.Label) })
	for i := 0; i <= 4; i++ {
		d := span * time.Duration(i) / 4
		c.Ticks = append(c.Ticks, tick{X: tLabelW + float64(i)*tPlotW/4, Y: c.AxisY + 14, Label: "+" + duration(d)})
	}
	return c, rows
}

// leaderAt is who led at t as this node saw it ("" when unknown or no one).
func leaderAt(events []Event, t time.Time) string {
	leader := ""
	for _, e := range events {
		if e.Time.After(t) {
			break
		}
		if e.LeaderChange {
			leader = e.Leader
		}
	}
	return leader
}

func orUnknown(s string) string {
	if s == "" {
		return "unknown"
	}
	return s
}
