package onetable

import (
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/wire"
)

// The coordinator decodes the party's output and checks the publication
// before committing it: no bytes may make it panic, and what it accepts
// is k-anonymous and l-diverse on the columns asked for.
func FuzzOutput(f *testing.F) {
	b, err := wire.Marshal(&output{Table: anonymize.Published{Columns: []string{"a", "s"},
		Rows: []anonymize.Row{{Values: []string{"x", "u"}, Count: 2}, {Values: []string{"x", "v"}, Count: 1}}}, NCP: 0.5})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var o output
		if wire.Unmarshal(b, &o) != nil {
			return
		}
		reqs := []anonymize.Requirement{{QID: []string{"a"}, K: 2}}
		prm := &Params{Requirements: reqs, Sensitive: "s", L: 2}
		out, err := decide(&job.Outcome[output]{Results: map[string]output{"p": o}}, "p", prm, []string{"a"})
		if err != nil {
			return
		}
		if g, err := out.Table.MinGroups(reqs); err != nil || g[0] < 2 {
			t.Fatalf("accepted a publication with classes of %v records (%v)", g, err)
		}
		if err := out.Table.CheckDistinctL(reqs, "s", 2); err != nil {
			t.Fatalf("accepted a publication that is not 2-diverse: %v", err)
		}
	})
}
