package publish

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/querylog"
)

// load reads the party's log as records and returns its table's name.
// A bad rank or result count is named by row and column, never by value.
func (s *session) load(ctx context.Context) ([]querylog.Record, string, error) {
	tables, err := job.LoadTables(ctx, s.p)
	if err != nil {
		return nil, "", err
	}
	t := tables[0]
	c := s.prm.Columns
	cols := map[string][]string{}
	for _, name := range c.list() {
		col, err := t.Column(name)
		if err != nil {
			return nil, "", fmt.Errorf("querylog: table %s has no column %q (params.columns)", t.Name, name)
		}
		cols[name] = col.Str
	}
	number := func(name string, i int) (int, error) {
		v := strings.TrimSpace(cols[name][i])
		if v == "" {
			return 0, nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("querylog: table %s row %d column %q: not a whole number of at least 0", t.Name, i+1, name)
		}
		return n, nil
	}
	log := make([]querylog.Record, t.NumRows())
	for i := range log {
		rank, err := number(c.Rank, i)
		if err != nil {
			return nil, "", err
		}
		var results int
		if c.Results != "" {
			if results, err = number(c.Results, i); err != nil {
				return nil, "", err
			}
		}
		log[i] = querylog.Record{User: cols[c.User][i], Query: cols[c.Query][i], Time: cols[c.Time][i],
			Rank: rank, Click: cols[c.Click][i], Results: results}
	}
	return log, t.Name, nil
}

// File is the publication `cohort sim` writes.
const File = "querylog.csv"

// Assemble writes DIR/querylog.csv (a header, then the published rows)
// and returns result.json with the file's name under "querylog" and the
// rows left out (they are in the file).
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("querylog: result: %w", err)
	}
	var rows []querylog.Row
	if err := json.Unmarshal(res["published"], &rows); err != nil {
		return nil, fmt.Errorf("querylog: result field published: %w", err)
	}
	if err := writeCSV(filepath.Join(dir, File), rows); err != nil {
		return nil, err
	}
	delete(res, "published")
	res["querylog"], _ = json.Marshal(File)
	return json.MarshalIndent(res, "", "  ")
}

func writeCSV(path string, rows []querylog.Row) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("querylog: %w", err)
	}
	w := csv.NewWriter(f)
	w.Write([]string{"user", "query", "time", "click"})
	for _, r := range rows {
		w.Write([]string{r.User, r.Query, r.Time, r.Click})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return fmt.Errorf("querylog: %s: %w", File, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("querylog: %s: %w", File, err)
	}
	return nil
}
