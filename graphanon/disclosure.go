package graphanon

import (
	"context"
	"fmt"
)

// Threshold is the adversary's success at one ρ: the pairs it predicts
// above ρ, how many of them are sensitive, δ = Predicted/|V|² (the
// paper's measure, eq. 1), precision (Fig. 8) and the share of sensitive
// pairs predicted (recall; Fig. 9b).
type Threshold struct {
	Rho       float64 `msgpack:"rho" json:"rho"`
	Predicted int     `msgpack:"predicted" json:"predicted"`
	Correct   int     `msgpack:"correct" json:"correct"`
	Delta     float64 `msgpack:"delta" json:"delta"`
	Precision float64 `msgpack:"precision" json:"precision"`
	Disclosed float64 `msgpack:"disclosed" json:"disclosed"`
}

// Report is a release's disclosure against its utility (§§6.2–6.3).
type Report struct {
	Nodes        int         `msgpack:"nodes" json:"nodes"`
	Sensitive    int         `msgpack:"sensitive" json:"sensitive"` // sensitive pairs in the graph
	Observations int         `msgpack:"observations" json:"observations"`
	Removed      int         `msgpack:"removed" json:"removed"` // observations the strategy removed
	RemovedShare float64     `msgpack:"removed_share" json:"removed_share"`
	Thresholds   []Threshold `msgpack:"thresholds" json:"thresholds"`
}

// Evaluate runs the adversary on an's release and scores it against g's
// sensitive pairs at every ρ in rhos (each in [0, 1)).
func Evaluate(ctx context.Context, g *Graph, an *Anonymised, m Model, rhos []float64) (Report, error) {
	for _, r := range rhos {
		if !(r >= 0 && r < 1) {
			return Report{}, fmt.Errorf("graphanon: every threshold must lie in [0, 1)")
		}
	}
	adv, err := NewAdversary(&an.Release, m)
	if err != nil {
		return Report{}, err
	}
	if adv.Nodes() != len(g.Nodes) || len(an.Place) != len(g.Nodes) {
		return Report{}, fmt.Errorf("graphanon: the release has %d nodes, the graph %d", adv.Nodes(), len(g.Nodes))
	}
	truth := g.SensitivePairs()
	rep := Report{Nodes: len(g.Nodes), Sensitive: len(truth), Observations: g.Observations(), Removed: an.Removed,
		Thresholds: make([]Threshold, len(rhos))}
	if rep.Observations > 0 {
		rep.RemovedShare = float64(rep.Removed) / float64(rep.Observations)
	}
	for i, r := range rhos {
		rep.Thresholds[i].Rho = r
	}
	for x := range g.Nodes {
		if err := ctx.Err(); err != nil {
			return Report{}, err
		}
		for y := x + 1; y < len(g.Nodes); y++ {
			p := adv.Prob(an.Place[x], an.Place[y])
			sens := truth[pair{x, y}]
			for i := range rhos {
				if p > rhos[i] {
					rep.Thresholds[i].Predicted++
					if sens {
						rep.Thresholds[i].Correct++
					}
				}
			}
		}
	}
	n2 := float64(len(g.Nodes)) * float64(len(g.Nodes))
	for i := range rep.Thresholds {
		t := &rep.Thresholds[i]
		t.Delta = float64(t.Predicted) / n2
		if t.Predicted > 0 {
			t.Precision = float64(t.Correct) / float64(t.Predicted)
		}
		if rep.Sensitive > 0 {
			t.Disclosed = float64(t.Correct) / float64(rep.Sensitive)
		}
	}
	return rep, nil
}
