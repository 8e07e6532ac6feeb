package main

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/cohortdm/cohort/anonymize/rating"
	"github.com/cohortdm/cohort/table"
)

// ratingData is a rating matrix as read from a table: the matrix, its
// users' ids and its issues' names, in the table's order.
type ratingData struct {
	m      *rating.Matrix
	users  []string
	issues []string
	layout string
	id     string
}

// loadRatings reads a rating table. Wide: one row per user, its id in
// column id (default: the first column), one column per issue, a rating
// 1..max or empty (or 0) for none. Long: one row per rating, columns
// user, item and rating (others ignored), users and items in order of
// first appearance. maxR 0 takes the largest rating present. Errors name
// the flag, the row and the column, never a value.
func loadRatings(ctx context.Context, arg, layout, id string, sensitive []string, maxR int) (*ratingData, error) {
	t, err := openSourceArg(ctx, arg)
	if err != nil {
		return nil, err
	}
	var d *ratingData
	switch layout {
	case "wide":
		d, err = wideRatings(t, id)
	case "long":
		d, err = longRatings(t)
	default:
		return nil, fmt.Errorf("--layout must be wide or long")
	}
	if err != nil {
		return nil, err
	}
	d.layout = layout
	d.m.Sensitive = make([]bool, len(d.issues))
	for _, s := range sensitive {
		i := slices.Index(d.issues, s)
		if i < 0 {
			return nil, fmt.Errorf("--sensitive: table %s has no issue %q", t.Name, s)
		}
		d.m.Sensitive[i] = true
	}
	if slices.Index(d.m.Sensitive, false) < 0 {
		return nil, fmt.Errorf("--sensitive: every issue is sensitive; at least one must not be")
	}
	top := 0
	for _, row := range d.m.R {
		top = max(top, slices.Max(row))
	}
	switch {
	case maxR == 0:
		d.m.Max = max(top, 1)
	case maxR < top:
		return nil, fmt.Errorf("--max: the table holds ratings above it")
	default:
		d.m.Max = maxR
	}
	return d, d.m.Check()
}

// parseRating reads one cell: empty or 0 is no rating.
func parseRating(s string) (int, bool) {
	if s == "" {
		return 0, true
	}
	x, err := strconv.Atoi(s)
	return x, err == nil && x >= 0
}

func wideRatings(t *table.Table, id string) (*ratingData, error) {
	if len(t.Columns) < 2 {
		return nil, fmt.Errorf("--layout wide: table %s needs a user column and at least one issue column", t.Name)
	}
	idCol := t.Columns[0]
	if id != "" {
		c, err := t.Column(id)
		if err != nil {
			return nil, fmt.Errorf("--id: table %s has no column %q", t.Name, id)
		}
		idCol = c
	}
	d := &ratingData{m: &rating.Matrix{}, users: idCol.Str, id: idCol.Name}
	var cols []*table.Column
	for _, c := range t.Columns {
		if c != idCol {
			cols = append(cols, c)
			d.issues = append(d.issues, c.Name)
		}
	}
	for r := range t.NumRows() {
		row := make([]int, len(cols))
		for i, c := range cols {
			x, ok := parseRating(c.Str[r])
			if !ok {
				return nil, fmt.Errorf("table %s, row %d, column %q: a rating is a whole number 1..max, or empty for none", t.Name, r+1, c.Name)
			}
			row[i] = x
		}
		d.m.R = append(d.m.R, row)
	}
	return d, nil
}

func longRatings(t *table.Table) (*ratingData, error) {
	var cols [3]*table.Column
	for j, name := range []string{"user", "item", "rating"} {
		c, err := t.Column(name)
		if err != nil {
			return nil, fmt.Errorf("--layout long: table %s has no column %q (it needs user, item and rating)", t.Name, name)
		}
		cols[j] = c
	}
	d := &ratingData{m: &rating.Matrix{}, id: "user"}
	userIx, itemIx := map[string]int{}, map[string]int{}
	type cell struct{ u, i, x int }
	var cells []cell
	for r := range t.NumRows() {
		u, ok := userIx[cols[0].Str[r]]
		if !ok {
			u = len(d.users)
			userIx[cols[0].Str[r]] = u
			d.users = append(d.users, cols[0].Str[r])
		}
		i, ok := itemIx[cols[1].Str[r]]
		if !ok {
			i = len(d.issues)
			itemIx[cols[1].Str[r]] = i
			d.issues = append(d.issues, cols[1].Str[r])
		}
		x, ok := parseRating(cols[2].Str[r])
		if !ok || x == 0 {
			return nil, fmt.Errorf("table %s, row %d, column \"rating\": a rating is a whole number 1..max", t.Name, r+1)
		}
		cells = append(cells, cell{u, i, x})
	}
	d.m.R = make([][]int, len(d.users))
	for u := range d.m.R {
		d.m.R[u] = make([]int, len(d.issues))
	}
	for r, c := range cells {
		if d.m.R[c.u][c.i] != 0 {
			return nil, fmt.Errorf("table %s, row %d: a second rating of one item by one user", t.Name, r+1)
		}
		d.m.R[c.u][c.i] = c.x
	}
	return d, nil
}

// writeRatings writes m in d's layout to a new table (never replacing).
func writeRatings(ctx context.Context, arg string, d *ratingData, m *rating.Matrix) error {
	to, err := parseSourceArg(arg, "")
	if err != nil {
		return fmt.Errorf("--out: %w", err)
	}
	t := &table.Table{Name: tableName(to)}
	cell := func(x int) string {
		if x == 0 {
			return ""
		}
		return strconv.Itoa(x)
	}
	if d.layout == "long" {
		cols := [3]*table.Column{{Name: "user", Kind: table.ID}, {Name: "item", Kind: table.Categorical}, {Name: "rating", Kind: table.Categorical}}
		for u, row := range m.R {
			for i, x := range row {
				if x > 0 {
					cols[0].Str = append(cols[0].Str, d.users[u])
					cols[1].Str = append(cols[1].Str, d.issues[i])
					cols[2].Str = append(cols[2].Str, cell(x))
				}
			}
		}
		t.Columns = cols[:]
	} else {
		t.Columns = []*table.Column{{Name: d.id, Kind: table.ID, Str: d.users}}
		for i, name := range d.issues {
			c := &table.Column{Name: name, Kind: table.Categorical, Str: make([]string, len(m.R))}
			for u, row := range m.R {
				c.Str[u] = cell(row[i])
			}
			t.Columns = append(t.Columns, c)
		}
	}
	return table.Write(ctx, to, t)
}
