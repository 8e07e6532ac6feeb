package job

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cohortdm/cohort/table"
)

// A dataset is what a node's policy decides about: the data a spec's table
// resolves to on that node, whatever the spec calls it. Two spec names that
// resolve to the same file (or the same database table or query) are one
// dataset, so renaming a table in a spec walks past no rule, no
// differencing history and no budget.

// DatasetIdentity is the canonical description of the data a resolved
// source reads (ResolveSource's result: its files already real paths).
// It stays on the node: it holds the node's own paths and, for a
// PostgreSQL or ClickHouse source, a digest of the connection the node
// reads.
func DatasetIdentity(src table.Source) string {
	var b strings.Builder
	switch src.Type() {
	case table.SQLite:
		b.WriteString("sqlite:" + src.SQLite)
	case table.Postgres:
		conn := "file:" + src.PostgresFile
		if src.PostgresEnv != "" {
			conn = "env:" + os.Getenv(src.PostgresEnv)
		}
		b.WriteString("postgres:" + digest(conn))
	case table.ClickHouse:
		b.WriteString("clickhouse:" + digest("env:"+os.Getenv(src.ClickHouseEnv)))
	default:
		return "file:" + src.Path
	}
	if src.Table != "" {
		b.WriteString("|table:" + src.Table)
	}
	if src.Query != "" {
		b.WriteString("|query:" + queryDigest(src.Query))
	}
	return b.String()
}

func digest(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:8])
}

// queryDigest names a query by its text with white space folded.
func queryDigest(q string) string { return digest(strings.Join(strings.Fields(q), " ")) }

// DatasetName returns the organisation's name for the dataset src reads
// (src resolved by ResolveSource against root): the name of the entry of
// the node's catalogue (node.yaml's tables:) that resolves to the same
// data, else the file's path inside root (a database source, its file or
// connection and the table, or a digest of the query). A catalogue that
// names one dataset twice is an error: a rule under one name would not
// hold under the other.
func DatasetName(root string, src table.Source, catalogue map[string]table.Source) (string, error) {
	id := DatasetIdentity(src)
	var names []string
	for name := range catalogue {
		c, err := ResolveSource(root, TableSpec{Name: name}, catalogue, false)
		if err != nil {
			continue // an entry whose data is missing names nothing
		}
		if DatasetIdentity(c) == id {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	switch len(names) {
	case 1:
		return names[0], nil
	case 0:
	default:
		return "", fmt.Errorf("the node's catalogue (tables:) names one dataset %s: give it one name", strings.Join(names, " and "))
	}
	rel := func(p string) string {
		realRoot, err := filepath.EvalSymlinks(root)
		if err != nil {
			return filepath.Base(p)
		}
		if r, err := filepath.Rel(realRoot, p); err == nil && filepath.IsLocal(r) {
			return filepath.ToSlash(r)
		}
		return filepath.Base(p)
	}
	switch src.Type() {
	case table.SQLite:
		return rel(src.SQLite) + datasetPart(src), nil
	case table.Postgres:
		if src.PostgresEnv != "" {
			return "$" + src.PostgresEnv + datasetPart(src), nil
		}
		return rel(src.PostgresFile) + datasetPart(src), nil
	case table.ClickHouse:
		return "$" + src.ClickHouseEnv + datasetPart(src), nil
	}
	return rel(src.Path), nil
}

// datasetPart names a database source's table or query in a dataset name.
func datasetPart(src table.Source) string {
	if src.Table != "" {
		return "#" + src.Table
	}
	return "#query-" + queryDigest(src.Query)
}
