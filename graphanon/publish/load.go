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

	"github.com/cohortdm/cohort/graphanon"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
)

// load reads the party's node and edge tables as a graph. A bad row is
// named by table, row and column, never by value.
func (s *session) load(ctx context.Context) (*graphanon.Graph, error) {
	tables, err := job.LoadTables(ctx, s.p)
	if err != nil {
		return nil, err
	}
	byName := map[string]*table.Table{}
	for _, t := range tables {
		byName[t.Name] = t
	}
	nodes, edges := byName[s.prm.Tables.Nodes], byName[s.prm.Tables.Edges]
	column := func(t *table.Table, name, field string) ([]string, error) {
		c, err := t.Column(name)
		if err != nil {
			return nil, fmt.Errorf("graph: table %s has no column %q (%s)", t.Name, name, field)
		}
		return c.Str, nil
	}
	g := &graphanon.Graph{Quasi: s.prm.Quasi, Sensitive: s.prm.Sensitive, Nodes: make([]graphanon.Node, nodes.NumRows())}
	ids, err := column(nodes, s.prm.Columns.ID, "params.columns.id")
	if err != nil {
		return nil, err
	}
	quasi := make([][]string, len(s.prm.Quasi))
	for q, name := range s.prm.Quasi {
		if quasi[q], err = column(nodes, name, "params.quasi"); err != nil {
			return nil, err
		}
	}
	index := make(map[string]int, len(ids))
	for i, id := range ids {
		if _, dup := index[id]; dup || id == "" {
			return nil, fmt.Errorf("graph: table %s row %d column %q: an empty id, or one an earlier row holds", nodes.Name, i+1, s.prm.Columns.ID)
		}
		index[id] = i
		g.Nodes[i] = graphanon.Node{ID: id, Attrs: make([]string, len(quasi))}
		for q := range quasi {
			g.Nodes[i].Attrs[q] = quasi[q][i]
		}
	}
	var cols [3][]string
	for i, c := range []struct{ name, field string }{{s.prm.Columns.Source, "params.columns.source"},
		{s.prm.Columns.Target, "params.columns.target"}, {s.prm.Columns.Type, "params.columns.type"}} {
		if cols[i], err = column(edges, c.name, c.field); err != nil {
			return nil, err
		}
	}
	g.Edges = make([]graphanon.Edge, edges.NumRows())
	for i := range g.Edges {
		a, okA := index[cols[0][i]]
		b, okB := index[cols[1][i]]
		if !okA || !okB || a == b || cols[2][i] == "" {
			return nil, fmt.Errorf("graph: table %s row %d: its source or target is no node of table %s, both are one node, or it has no type",
				edges.Name, i+1, nodes.Name)
		}
		g.Edges[i] = graphanon.Edge{A: a, B: b, Type: cols[2][i]}
	}
	return g, nil
}

// joined is a class's values of one quasi-identifier as published.
func joined(values []string) string { return strings.Join(values, "|") }

// The files `cohort sim` writes.
const (
	ClassesFile = "graph-classes.csv"
	NodesFile   = "graph-nodes.csv"
	EdgesFile   = "graph-edges.csv"
)

// Assemble writes the release as DIR/graph-classes.csv, graph-nodes.csv
// (node strategies only) and graph-edges.csv, and returns result.json with
// the files' names under "graph" and the release left out.
func (Kind) Assemble(_ context.Context, _ *job.Spec, result []byte, _ map[string]job.Secrets, dir string) ([]byte, error) {
	var res map[string]json.RawMessage
	if err := json.Unmarshal(result, &res); err != nil {
		return nil, fmt.Errorf("graph: result: %w", err)
	}
	var rel graphanon.Release
	if err := json.Unmarshal(res["release"], &rel); err != nil {
		return nil, fmt.Errorf("graph: result field release: %w", err)
	}
	classes := [][]string{append([]string{"class", "size"}, rel.Quasi...)}
	for _, c := range rel.Classes {
		row := []string{c.ID, strconv.Itoa(c.Size)}
		for _, vs := range c.Attrs {
			row = append(row, joined(vs))
		}
		classes = append(classes, row)
	}
	edges := [][]string{{"a", "b", "type", "count"}}
	for _, e := range rel.Edges {
		edges = append(edges, []string{e.A, e.B, e.Type, strconv.Itoa(e.Count)})
	}
	files := map[string]string{"classes": ClassesFile, "edges": EdgesFile}
	if !rel.Strategy.Clustered() {
		nodes := [][]string{{"node", "class"}}
		for _, n := range rel.Nodes {
			nodes = append(nodes, []string{n.ID, n.Class})
		}
		if err := writeCSV(filepath.Join(dir, NodesFile), nodes); err != nil {
			return nil, err
		}
		files["nodes"] = NodesFile
	}
	if err := writeCSV(filepath.Join(dir, ClassesFile), classes); err != nil {
		return nil, err
	}
	if err := writeCSV(filepath.Join(dir, EdgesFile), edges); err != nil {
		return nil, err
	}
	delete(res, "release")
	res["graph"], _ = json.Marshal(files)
	if len(rel.Constraints) > 0 {
		res["constraints"], _ = json.Marshal(rel.Constraints)
	}
	return json.MarshalIndent(res, "", "  ")
}

func writeCSV(path string, rows [][]string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("graph: %w", err)
	}
	w := csv.NewWriter(f)
	if err := w.WriteAll(rows); err != nil {
		f.Close()
		return fmt.Errorf("graph: %s: %w", filepath.Base(path), err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("graph: %s: %w", filepath.Base(path), err)
	}
	return nil
}
