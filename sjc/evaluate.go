package sjc

import (
	"context"
	"fmt"
	"slices"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/tree"
)

// testLabel stands for a test class the training set does not have: it
// sorts before every label and no leaf has it.
const testLabel = "\x00"

// evaluate classifies the test join rows with the final tree, without
// materialising the test join: PSI and class propagation over the test
// tables, then split propagation down the tree, each party applying its
// own predicates. The target table's party counts the correct join rows.
func (s *session) evaluate(ctx context.Context, step job.Step, a finishArgs, won map[int32]*tree.Split) (correct, total uint64, err error) {
	labels := slices.Sorted(slices.Values(append([]string{testLabel}, s.labels...)))
	locals := make([]*Local, len(s.g.Tables))
	for _, i := range s.own {
		name := s.g.Tables[i].Name
		schema, err := s.p.Spec().TableSchema(name)
		if err != nil {
			return 0, 0, err
		}
		d, err := testTable(ctx, s.p, name, schema, s.groupRows)
		if err != nil {
			return 0, 0, err
		}
		t := d.Table
		if i == 0 {
			t = relabel(t, s.g.Class, s.labels)
		}
		base, err := newLocalBase(s.g, name, t, weights(d.Counts), Params{})
		if err == nil {
			locals[i], err = base.withLabels(labels)
		}
		if err != nil {
			return 0, 0, fmt.Errorf("test set: %w", err)
		}
	}
	shared, err := s.intersect(ctx, step, "test-psi", locals)
	if err != nil {
		return 0, 0, err
	}
	parts := make([]Part, len(s.g.Tables))
	for _, i := range s.own {
		parts[i] = locals[i].Initial()
	}
	if err := s.classPropagate(ctx, step, "test-class", locals, shared, parts); err != nil {
		return 0, 0, err
	}
	at := map[int32][]Part{}
	if len(a.Nodes) > 0 {
		at[a.Nodes[0].ID] = parts
	}
	for _, n := range a.Nodes {
		ps, ok := at[n.ID]
		if !ok {
			return 0, 0, fmt.Errorf("sjc: final tree node %d is not reached from the root", n.ID)
		}
		delete(at, n.ID)
		if n.Table >= 0 {
			left, right, err := s.splitNode(ctx, step, fmt.Sprintf("test-split/%d", n.ID), locals, shared, ps, n.Table, won[n.ID])
			if err != nil {
				return 0, 0, err
			}
			at[n.Left], at[n.Right] = left, right
			continue
		}
		if !s.owns(0) {
			continue
		}
		c, err := locals[0].Counts(ps[0])
		if err != nil {
			return 0, 0, err
		}
		k, _ := slices.BinarySearch(labels, s.labels[n.Label])
		correct += c[k]
		for _, x := range c {
			total += x
		}
	}
	return correct, total, nil
}

// relabel returns t with every class value not in labels (the training
// labels, sorted) replaced by testLabel (a test class the tree never
// predicts).
func relabel(t *table.Table, class string, labels []string) *table.Table {
	out := &table.Table{Name: t.Name}
	for _, c := range t.Columns {
		if c.Name == class {
			nc := &table.Column{Name: c.Name, Kind: c.Kind, Str: make([]string, len(c.Str))}
			for r, v := range c.Str {
				if _, ok := slices.BinarySearch(labels, v); ok {
					nc.Str[r] = v
				} else {
					nc.Str[r] = testLabel
				}
			}
			c = nc
		}
		out.Columns = append(out.Columns, c)
	}
	return out
}
