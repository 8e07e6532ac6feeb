package console

import (
	"slices"
	"strconv"
	"time"

	"github.com/cohortdm/cohort/wire"
)

// Charts are SVG drawn by the templates (charts.html) from the geometry
// computed here: no script and no inline style (the Content-Security-Policy
// allows neither), colours from CSS classes.

// seg is one rectangle of a chart, with its tooltip.
type seg struct {
	X, Y, W, H   float64
	Class, Title string
}

// tick is a label on an axis.
type tick struct {
	X, Y  float64
	Label string
}

type legendItem struct{ Class, Label string }

// part is one stacked piece of a bar.
type part struct {
	Class, Title string
	Value        float64
}

// barRow is one bar of a horizontal bar chart: its label, the value
// written after it, and its stacked parts.
type barRow struct {
	Label, Value string
	Parts        []part
}

// barChart is a horizontal bar chart.
type barChart struct {
	W, H   int
	Label  string // what the chart shows, for screen readers
	Bars   []bar
	Legend []legendItem
}

type bar struct {
	Label, Value   string
	LabelY, ValueX float64
	Segs           []seg
}

const (
	hLabelW = 170
	hBarW   = 380
	// hNarrowW is the bars' width in charts shown side by side.
	hNarrowW = 230
	hValueW  = 110
	hRowH    = 22
)

// hbars lays out a horizontal bar chart, every bar scaled to the largest.
func hbars(label string, rows []barRow, legend []legendItem) barChart {
	return hbarsWide(label, rows, legend, hBarW)
}

// hbarsWide is hbars with bars at most barW wide.
func hbarsWide(label string, rows []barRow, legend []legendItem, barW float64) barChart {
	var most float64
	for _, r := range rows {
		var sum float64
		for _, p := range r.Parts {
			sum += p.Value
		}
		most = max(most, sum)
	}
	c := barChart{W: hLabelW + int(barW) + hValueW, H: len(rows)*hRowH + 4, Label: label, Legend: legend}
	for i, r := range rows {
		y := float64(i*hRowH) + 2
		b := bar{Label: r.Label, Value: r.Value, LabelY: y + 15, ValueX: hLabelW + barW + 6}
		x := float64(hLabelW)
		for _, p := range r.Parts {
			w := 0.0
			if most > 0 {
				w = p.Value / most * barW
			}
			b.Segs = append(b.Segs, seg{X: x, Y: y + 3, W: w, H: hRowH - 8, Class: p.Class, Title: p.Title})
			x += w
		}
		c.Bars = append(c.Bars, b)
	}
	return c
}

// colChart is a chart of stacked columns over time.
type colChart struct {
	W, H   int
	Label  string
	Segs   []seg
	Ticks  []tick
	Top    string  // the value at the top of the axis
	TopY   float64 // the top of the axis
	BaseY  float64 // the x axis
	Left   float64 // the y axis
	LabelX float64 // where the y axis' labels end
	Legend []legendItem
}

const (
	cLeft   = 70
	cPlotW  = 580
	cPlotH  = 160
	cTop    = 16
	cBottom = 24
)

// columns lays out stacked columns, one per bucket of the given width
// starting at start; each stack's parts are drawn bottom up.
func columns(label string, start time.Time, width time.Duration, stacks [][]part, legend []legendItem, format func(float64) string) colChart {
	c := colChart{W: cLeft + cPlotW + 10, H: cTop + cPlotH + cBottom, Label: label, Legend: legend,
		BaseY: cTop + cPlotH, TopY: cTop, Left: cLeft, LabelX: cLeft - 6}
	var most float64
	for _, s := range stacks {
		var sum float64
		for _, p := range s {
			sum += p.Value
		}
		most = max(most, sum)
	}
	c.Top = format(most)
	if len(stacks) == 0 || most == 0 {
		return c
	}
	colW := float64(cPlotW) / float64(len(stacks))
	for i, s := range stacks {
		y := float64(cTop + cPlotH)
		for _, p := range s {
			h := p.Value / most * cPlotH
			y -= h
			c.Segs = append(c.Segs, seg{X: cLeft + float64(i)*colW + 1, Y: y, W: max(colW-2, 1), H: h, Class: p.Class, Title: p.Title})
		}
	}
	step := max(1, len(stacks)/6)
	for i := 0; i < len(stacks); i += step {
		t := start.Add(time.Duration(i) * width).UTC()
		f := "15:04:05"
		switch {
		case width >= 24*time.Hour:
			f = "01-02"
		case width >= time.Hour:
			f = "01-02 15h"
		case width >= time.Minute:
			f = "15:04"
		}
		c.Ticks = append(c.Ticks, tick{X: cLeft + float64(i)*colW, Y: cTop + cPlotH + 16, Label: t.Format(f)})
	}
	return c
}

// bucketWidth is the narrowest of a few round widths that covers span in
// at most n buckets.
func bucketWidth(span time.Duration, n int) time.Duration {
	ws := bucketWidths()
	for _, w := range ws[:len(ws)-1] {
		if span < w*time.Duration(n) {
			return w
		}
	}
	return ws[len(ws)-1]
}

// bucketWidths are the widths bucketWidth chooses from, narrowest first;
// the last is taken whatever the span.
func bucketWidths() []time.Duration {
	return []time.Duration{time.Second, 10 * time.Second, time.Minute, 5 * time.Minute, 15 * time.Minute,
		time.Hour, 6 * time.Hour, 24 * time.Hour, 7 * 24 * time.Hour, 30 * 24 * time.Hour}
}

// discClass is a disclosure kind's colour class, by its place in the
// ledger's vocabulary.
func discClass(d string) string {
	i := slices.Index(wire.Disclosures(), wire.Disclosure(d))
	if i < 0 {
		return "k-other"
	}
	return "k" + strconv.Itoa(i)
}

// partyClass is a member's colour class, by its place among the members.
func partyClass(names []string, name string) string {
	i := slices.Index(names, name)
	if i < 0 {
		return "p-other"
	}
	return "p" + strconv.Itoa(i%8)
}
