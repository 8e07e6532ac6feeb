package transform_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/cohortdm/cohort/table"
	"github.com/cohortdm/cohort/transform"
	"github.com/cohortdm/cohort/transform/internal/dtree"
	"github.com/cohortdm/cohort/transform/internal/synth"
	"github.com/cohortdm/cohort/tree"
)

// sklearnExport writes t as the scikit-learn-style export: nodes numbered
// in pre-order, left first (scikit-learn's depth-first builder), classes
// in the order given (a permutation of t's labels), value as counts or,
// with fractions, as scikit-learn >= 1.4 stores it.
func sklearnExport(t *tree.Tree, features, classes []string, fractions bool) []byte {
	f := map[string]any{"feature_names": features, "classes": classes}
	var left, right, feat []int
	var thr []float64
	var ns []uint64
	var val [][][]float64
	var walk func(n *tree.Node) int
	walk = func(n *tree.Node) int {
		id := len(left)
		left, right, feat, thr = append(left, -1), append(right, -1), append(feat, -2), append(thr, -2)
		var total uint64
		for _, c := range n.Counts {
			total += c
		}
		ns = append(ns, total)
		row := make([]float64, len(classes))
		for i, cl := range classes {
			for j, l := range t.Labels {
				if l == cl {
					row[i] = float64(n.Counts[j])
					if fractions {
						row[i] /= float64(total)
					}
				}
			}
		}
		val = append(val, [][]float64{row})
		if !n.IsLeaf() {
			for i, name := range features {
				if name == n.Split.Column {
					feat[id] = i
				}
			}
			thr[id] = n.Split.Num
			l := walk(n.Left)
			r := walk(n.Right)
			left[id], right[id] = l, r
		}
		return id
	}
	walk(t.Root)
	f["children_left"], f["children_right"], f["feature"], f["threshold"] = left, right, feat, thr
	f["n_node_samples"], f["value"] = ns, val
	b, _ := json.Marshal(f)
	return b
}

// numericSynth is a synthetic table without its categorical column (an
// sklearn tree splits numbers only) and with an empty table name (an
// export names no table).
func numericSynth(seed uint64, n int) *table.Table {
	t := synth.Table("", seed, n)
	t.Columns = append(t.Columns[:4], t.Columns[5])
	return t
}

// A tree written in the sklearn-style export (counts or fractions, classes
// in any order) reads back as the same tree, and decodes like it.
func TestSklearnRoundTrip(t *testing.T) {
	raw := numericSynth(3, 900)
	rec, key, err := transform.Transform(raw, "label", transform.Options{Rand: seeded(3)})
	if err != nil {
		t.Fatal(err)
	}
	mined, err := dtree.Build(rec, "label", dtree.Params{Criterion: dtree.Gini})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := transform.DecodeTreeWithTable(mined, key, raw)
	features := []string{"score", "age", "level", "amount"}
	for _, fractions := range []bool{false, true} {
		for _, classes := range [][]string{{"c0", "c1", "c2"}, {"c2", "c0", "c1"}} {
			got, format, err := transform.ParseTree(sklearnExport(mined, features, classes, fractions))
			if err != nil || format != transform.FormatSklearn {
				t.Fatalf("fractions %v, classes %v: %v, %s", fractions, classes, err, format)
			}
			if d := tree.Diff(mined, got); d != "" {
				t.Fatalf("fractions %v, classes %v: %s", fractions, classes, d)
			}
			dec, err := transform.DecodeTreeWithTable(got, key, raw)
			if err != nil {
				t.Fatal(err)
			}
			if d := tree.Diff(want, dec); d != "" {
				t.Fatal(d)
			}
		}
	}
	js, _ := mined.MarshalJSON()
	if got, format, err := transform.ParseTree(js); err != nil || format != transform.FormatCohort || tree.Diff(mined, got) != "" {
		t.Fatalf("cohort format: %v, %s", err, format)
	}
}

// secret is a class label and feature name that must never appear in an
// error: errors name the field, not the data.
const secret = "SECRET-7431"

// Malformed exports are refused with an error naming the field.
func TestSklearnErrors(t *testing.T) {
	base := func() map[string]any {
		return map[string]any{
			"feature_names": []string{"x", secret}, "classes": []string{secret, "b"},
			"children_left": []int{1, -1, -1}, "children_right": []int{2, -1, -1},
			"feature": []int{1, -2, -2}, "threshold": []float64{0.5, -2, -2},
			"n_node_samples": []int{5, 3, 2}, "value": [][][]float64{{{3, 2}}, {{3, 0}}, {{0, 2}}},
		}
	}
	if _, err := transform.ParseSklearn(mustJSON(base())); err != nil {
		t.Fatalf("base: %v", err)
	}
	for _, tc := range []struct {
		field string
		set   any
		want  string
	}{
		{"children_left", []int{}, "children_left: empty"},
		{"feature", []int{1, -2}, "not one entry per node"},
		{"classes", []string{secret, secret}, "classes[1]"},
		{"feature_names", []string{"x", ""}, "feature_names[1]"},
		{"children_left", []int{1, -1, 1}, "node 2"},
		{"children_left", []int{0, -1, -1}, "node 0: children"},
		{"children_right", []int{1, -1, -1}, "node 0: children"},
		{"feature", []int{2, -2, -2}, "node 0: feature"},
		{"threshold", []float64{0.5, 0, -2}, "node 1: a leaf"},
		{"n_node_samples", []int{5, 3, 0}, "node 2: value or n_node_samples"},
		{"value", [][][]float64{{{3, 2}}, {{3, 0}}, {{0, 2, 1}}}, "node 2: value"},
		{"value", [][][]float64{{{3, 2}}, {{2.5, 0.5}}, {{0, 2}}}, "not whole counts"},
		{"n_node_samples", []int{5, 3, 3}, "not the sum of its children"},
		{"value", [][][]float64{{{3, -2}}, {{3, 0}}, {{0, 2}}}, "non-negative"},
		{"extra", 1, "unknown field"},
		{"threshold", "x", "field threshold"},
	} {
		f := base()
		f[tc.field] = tc.set
		_, err := transform.ParseSklearn(mustJSON(f))
		if err == nil || !errors.Is(err, transform.ErrTree) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("%s = %v: %v, want an error with %q and without the data", tc.field, tc.set, err, tc.want)
		}
	}
	if _, err := transform.ParseSklearn(append(mustJSON(base()), []byte(" {}")...)); err == nil {
		t.Error("trailing data accepted")
	}
	// Cohort's format: package tree's messages quote labels; they are redacted.
	bad := []byte(`{"leaf":"` + secret + `","counts":{"` + secret + `":1},"left":{"leaf":"a","counts":{"a":1}}}`)
	if _, _, err := transform.ParseTree(bad); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("cohort format: %v", err)
	}
	if _, _, err := transform.ParseTree([]byte(`{"leaf": "` + secret)); err == nil || strings.Contains(err.Error(), secret) {
		t.Errorf("truncated: %v", err)
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// A key file reads back as the key it was written from, and decodes trees
// the same way.
func TestKeyRoundTrip(t *testing.T) {
	raw := synth.Table("synth", 4, 700)
	rec, key, err := transform.Transform(raw, "label", transform.Options{Rand: seeded(4), Direction: transform.AntiMonotone})
	if err != nil {
		t.Fatal(err)
	}
	b, err := key.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	back, err := transform.ParseKey(b)
	if err != nil {
		t.Fatal(err)
	}
	b2, _ := back.MarshalBinary()
	if !bytes.Equal(b, b2) {
		t.Fatal("key changed in a round trip")
	}
	mined, _ := dtree.Build(rec, "label", dtree.Params{})
	d1, err1 := transform.DecodeTree(mined, key)
	d2, err2 := transform.DecodeTree(mined, back)
	if err1 != nil || err2 != nil || tree.Diff(d1, d2) != "" {
		t.Fatalf("decoding differs: %v %v", err1, err2)
	}
	for _, c := range back.Columns {
		if !c.Recoded() {
			continue
		}
		for i, v := range c.Values {
			if y, ok := c.Encode(v); !ok || y != c.Images[i] {
				t.Fatalf("%s: Encode", c.Name)
			}
			if x, ok := c.Decode(c.Images[i]); !ok || x != v {
				t.Fatalf("%s: Decode", c.Name)
			}
		}
	}
}

// Malformed or inconsistent keys are refused with an error naming the
// field, never a value.
func TestKeyErrors(t *testing.T) {
	good := func() map[string]any {
		return map[string]any{
			"format": "cohort-transform-key", "version": 1, "table": "t", "class": "y", "rows": 4,
			"columns": []any{
				map[string]any{"name": "x", "kind": "numeric", "direction": "monotone",
					"pieces": []any{map[string]any{"start": 0, "len": 2, "mono": true}, map[string]any{"start": 2, "len": 2, "mono": false}},
					"values": []float64{1, 2, 3, 4}, "images": []float64{10.5, 10, 123456.5, 123460}},
				map[string]any{"name": "y", "kind": "class"},
			},
		}
	}
	if _, err := transform.ParseKey(mustJSON(good())); err != nil {
		t.Fatalf("good key: %v", err)
	}
	col := func(k map[string]any) map[string]any { return k["columns"].([]any)[0].(map[string]any) }
	for _, tc := range []struct {
		name string
		edit func(k map[string]any)
		want string
	}{
		{"version", func(k map[string]any) { k["version"] = 2 }, "format"},
		{"rows", func(k map[string]any) { k["rows"] = 0 }, "rows"},
		{"unknown", func(k map[string]any) { k["salt"] = 1 }, "unknown field"},
		{"class", func(k map[string]any) { k["class"] = "x" }, "class"},
		{"dup", func(k map[string]any) { k["columns"] = append(k["columns"].([]any), col(k)) }, "columns[2].name"},
		{"kind", func(k map[string]any) { col(k)["kind"] = "number" }, "columns[0].kind"},
		{"kept with values", func(k map[string]any) { col(k)["kind"] = "categorical" }, "columns[0].kind"},
		{"direction", func(k map[string]any) { col(k)["direction"] = "up" }, "columns[0].direction"},
		{"values order", func(k map[string]any) { col(k)["values"] = []float64{1, 3, 2, 4} }, "columns[0].values[2]"},
		{"image count", func(k map[string]any) { col(k)["images"] = []float64{10, 11, 12} }, "columns[0].images"},
		{"repeat", func(k map[string]any) { col(k)["images"] = []float64{10, 11, 123456.5, 10} }, "repeats"},
		{"float32", func(k map[string]any) { col(k)["images"] = []float64{10, 11, 123456.5, 123456.51} }, "float32"},
		{"pieces gap", func(k map[string]any) {
			col(k)["pieces"] = []any{map[string]any{"start": 0, "len": 1}, map[string]any{"start": 2, "len": 2}}
		}, "columns[0].pieces[1]"},
		{"pieces short", func(k map[string]any) { col(k)["pieces"] = []any{map[string]any{"start": 0, "len": 3}} }, "cover"},
		{"invariant", func(k map[string]any) { col(k)["images"] = []float64{10, 123457, 123456.5, 123460} }, "invariant"},
		{"not monotone", func(k map[string]any) { col(k)["images"] = []float64{10.5, 10, 123460, 123456.5} }, "not monotone"},
		{"mono gap", func(k map[string]any) { col(k)["images"] = []float64{10, 20, 25, 40} }, "pieces[0]: mono piece closer"},
		{"syntax", nil, "invalid JSON"},
		{"trailing", nil, "data after the object"},
	} {
		k := good()
		var b []byte
		switch tc.name {
		case "syntax":
			b = []byte(`{"format": 123456.5 x}`)
		case "trailing":
			b = append(mustJSON(k), '{')
		default:
			tc.edit(k)
			b = mustJSON(k)
		}
		_, err := transform.ParseKey(b)
		if err == nil || !errors.Is(err, transform.ErrKey) || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "123456") {
			t.Errorf("%s: %v, want an error with %q and without a value", tc.name, err, tc.want)
		}
	}
}

// Decoding refuses trees it cannot map back: a split on an unknown
// column, on the class, a categorical op on a recoded column, a threshold
// outside the domain, a tree from another table.
func TestDecodeErrors(t *testing.T) {
	raw := synth.Table("synth", 2, 300)
	rec, key, err := transform.Transform(raw, "label", transform.Options{Rand: seeded(2)})
	if err != nil {
		t.Fatal(err)
	}
	mined, _ := dtree.Build(rec, "label", dtree.Params{MaxDepth: 2})
	for _, tc := range []struct {
		name string
		edit func(s *tree.Split)
		want string
	}{
		{"unknown", func(s *tree.Split) { s.Column = "height" }, "root: split on column \"height\""},
		{"class", func(s *tree.Split) { s.Column = "label" }, "not a column the key"},
		{"op", func(s *tree.Split) { s.Op, s.Cat = tree.OpEQ, "3" }, "op =="},
		{"below", func(s *tree.Split) { s.Num = -1e300 }, "one side"},
	} {
		bad := cloneTree(mined)
		tc.edit(bad.Root.Split)
		if _, err := transform.DecodeTree(bad, key); err == nil || !errors.Is(err, transform.ErrDecode) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	other := synth.Table("synth", 9, 300)
	if _, err := transform.DecodeTreeWithTable(mined, key, other); err == nil {
		t.Error("a tree decoded against another table")
	}
	bad := cloneTree(mined)
	bad.Root.Left.Counts[0]++
	if _, err := transform.DecodeTreeWithTable(bad, key, raw); err == nil || !strings.Contains(err.Error(), "root.left: the node's class counts") {
		t.Errorf("wrong counts: %v", err)
	}
}

func cloneTree(t *tree.Tree) *tree.Tree {
	b, _ := t.MarshalJSON()
	var out tree.Tree
	if err := out.UnmarshalJSON(b); err != nil {
		panic(err)
	}
	return &out
}

// FuzzParseSklearn: the tree-file decoders never panic, and what they
// accept is a consistent tree (it writes as Cohort's tree JSON).
func FuzzParseSklearn(f *testing.F) {
	raw := numericSynth(1, 60)
	mined, _ := dtree.Build(raw, "label", dtree.Params{MaxDepth: 3})
	f.Add(sklearnExport(mined, []string{"age", "level", "amount", "score"}, []string{"c1", "c0", "c2"}, true))
	f.Add(sklearnExport(mined, []string{"age", "level", "amount", "score"}, []string{"c0", "c1", "c2"}, false))
	js, _ := mined.MarshalJSON()
	f.Add(js)
	f.Add([]byte(`{"children_left":[-1],"children_right":[-1],"feature":[-2],"threshold":[-2],"n_node_samples":[1],"value":[[[1]]],"classes":["a"],"feature_names":[]}`))
	f.Add([]byte(`{"children_left":[1,-1,-1],"children_right":[2,-1,-1]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		tr, _, err := transform.ParseTree(data)
		if err != nil {
			return
		}
		if _, err := tr.MarshalJSON(); err != nil {
			t.Fatalf("accepted a tree that does not write: %v", err)
		}
	})
}

// FuzzParseKey: the key decoder never panics, and a key it accepts writes
// and reads back unchanged and decodes thresholds without panicking.
func FuzzParseKey(f *testing.F) {
	_, key, err := transform.Transform(synth.Table("s", 1, 40), "label", transform.Options{Rand: seeded(1)})
	if err != nil {
		f.Fatal(err)
	}
	b, _ := key.MarshalBinary()
	f.Add(b)
	f.Add([]byte(`{"format":"cohort-transform-key","version":1,"table":"t","class":"y","rows":1,"columns":[{"name":"y","kind":"class"}]}`))
	f.Add([]byte(`{"format":"cohort-transform-key","version":1,"rows":2,"class":"y","columns":[{"name":"x","kind":"numeric","direction":"anti-monotone","pieces":[{"start":0,"len":2,"mono":false}],"values":[1,2],"images":[5,3]},{"name":"y","kind":"class"}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		k, err := transform.ParseKey(data)
		if err != nil {
			return
		}
		b, err := k.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		k2, err := transform.ParseKey(b)
		if err != nil {
			t.Fatalf("a written key does not read back: %v", err)
		}
		b2, _ := k2.MarshalBinary()
		if !bytes.Equal(b, b2) {
			t.Fatal("key changed in a round trip")
		}
		for _, c := range k.Columns {
			if c.Recoded() {
				one := &tree.Tree{Labels: []string{"a"}, Root: &tree.Node{Counts: []uint64{2},
					Split: &tree.Split{Column: c.Name, Op: tree.OpLE, Num: c.Images[0]},
					Left:  &tree.Node{Counts: []uint64{1}}, Right: &tree.Node{Counts: []uint64{1}}}}
				_, _ = transform.DecodeTree(one, k)
			}
		}
	})
}
