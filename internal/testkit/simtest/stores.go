package simtest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/table"
)

// RaftFiles calls fn with the path and contents of every file of the named
// member's Raft store (its log and its snapshots). The files are read
// whole, so call it once the cluster is closed.
func RaftFiles(tb testing.TB, c *sim.Cluster, name string, fn func(path string, data []byte)) {
	tb.Helper()
	err := filepath.Walk(filepath.Join(c.DataDir(name), "raft"), func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		fn(path, b)
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// QueryNotInRaft checks, once the cluster is closed, that no member's Raft
// store holds physical, the database table a pushed-down query read (the
// query belongs in the node's own log only, issue 35). Unless word is
// empty, each store must hold word, a name the committed spec carries as
// text, without which this check could not see a query either.
func QueryNotInRaft(tb testing.TB, c *sim.Cluster, physical, word string) {
	tb.Helper()
	for _, name := range c.Names {
		sawWord := word == ""
		RaftFiles(tb, c, name, func(path string, b []byte) {
			sawWord = sawWord || bytes.Contains(b, []byte(word))
			if bytes.Contains(b, []byte(physical)) {
				tb.Errorf("%s's Raft store %s holds the pushed-down query's table", name, path)
			}
		})
		if !sawWord {
			tb.Errorf("%s's Raft store does not hold the job's spec as text: the check above cannot see a query", name)
		}
	}
}

// WriteWithSecret writes t to dst with a column "secret" beside its own,
// one the jobs' schemas leave out, as a policy keeps a column home: a
// pushed-down query must never select it.
func WriteWithSecret(tb testing.TB, ctx context.Context, t *table.Table, dst table.Source) {
	tb.Helper()
	secret := &table.Column{Name: "secret", Kind: table.Categorical}
	for range t.NumRows() {
		secret.Str = append(secret.Str, "kept home")
	}
	withSecret := *t
	withSecret.Columns = append(t.Columns[:len(t.Columns):len(t.Columns)], secret)
	if err := table.Write(ctx, dst, &withSecret); err != nil {
		tb.Fatal(err)
	}
}
