package sjc

import (
	"testing"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/protocol"
)

// FuzzJobMessages feeds arbitrary bytes to every decoder of the job's
// messages and kept state: the coordinator's offers check, a party's plan
// check, the won list and the checkpoint. Each refuses what is malformed
// with an error; none panics.
func FuzzJobMessages(f *testing.F) {
	g, err := NewGraph(&job.Spec{
		Kind: "sjc",
		Parties: []job.PartySpec{
			{Name: "a", Tables: []job.TableSpec{{Name: "L", Path: "L.csv"}}},
			{Name: "b", Tables: []job.TableSpec{{Name: "S", Path: "S.csv"}}},
		},
		Schema: map[string]map[string]string{"L": {"k": "key", "c": "class"}, "S": {"k": "key", "x": "numeric"}},
		Join:   []string{"L.k = S.k"},
	})
	if err != nil {
		f.Fatal(err)
	}
	for _, v := range []any{
		&Offers{Nodes: [][]Offer{{{Gains: []float64{0.5}}, {}}}},
		&Offers{Nodes: [][]Offer{{{}, {Gains: []float64{0.1, 0.2}}}}, Error: "x"},
		&Plan{Splits: []int{1, -1}},
		&Plan{Abort: true},
		&Won{Nodes: []WonNode{{Open: 0, Index: 1}}},
		&countsOutput{Tables: true, Counts: [][]uint64{{1, 2}, {3, 4}}},
		&loadOutput{Labels: []string{"n", "y"}},
		&finishOutput{Target: true, Correct: 1, Total: 2},
		&predictLoadOutput{Labels: []string{"n", "y"}, Nodes: []ModelNode{{ID: 0, Table: "S", Left: 1, Right: 2}, {ID: 1, Label: 1}, {ID: 2}}},
		&state{Key: "grow/1", Shared: [][]string{{"1:a"}}, Nodes: []nodeState{{ID: 3, Parts: []Part{{Rows: []int32{1}, Cls: []uint64{1, 2}}, {}}}}},
	} {
		b, err := protocol.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, name := range []string{"a", "b"} {
			offers := [][]Offer{make([]Offer, 2)}
			if why := mergeOffers(g, name, b, offers); why == "" {
				for tb, o := range offers[0] {
					if len(o.Gains) > 0 && g.Tables[tb].Party != name {
						t.Fatalf("party %s's offers accepted for table %d", name, tb)
					}
				}
			}
		}
		if p, err := checkPlan(b, 2, 2); err == nil && !p.Abort {
			for _, x := range p.Splits {
				if x < -1 || x >= 2 {
					t.Fatalf("plan accepted with table %d", x)
				}
			}
		}
		var w Won
		_ = decode(b, &w)
		var st state
		_ = decode(b, &st)
		var lo predictLoadOutput
		if decode(b, &lo) == nil {
			_ = checkSkeleton(g, lo.Nodes, len(lo.Labels))
		}
		// Party outputs, as the coordinator decides on them.
		parties := []string{"a", "b"}
		outs := &job.Outputs{Results: map[string][]byte{"a": b, "b": b}, Failed: map[string]string{}}
		_ = decideLoad(outs, g, parties)
		_ = decidePropagate(outs, g, parties, 2)
		if d := decideGrow(outs, parties, Plan{Splits: []int{1, -1}}, "", 2); d.Error == "" && !d.Retry && len(d.Children) != 2 {
			t.Fatalf("grow decided %d children for one split", len(d.Children))
		}
		_ = decideFinish(outs, parties, true)
		_ = decidePredictLoad(outs, g, parties)
	})
}
