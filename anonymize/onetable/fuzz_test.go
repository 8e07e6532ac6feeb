package onetable

import (
	"testing"

	"github.com/cohortdm/cohort/anonymize"
	"github.com/cohortdm/cohort/protocol"
)

// The coordinator decodes the party's output and checks the publication:
// no bytes may make it panic.
func FuzzOutput(f *testing.F) {
	b, err := protocol.Marshal(&output{Table: anonymize.Published{Columns: []string{"a"}, Rows: []anonymize.Row{{Values: []string{"x"}, Count: 2}}}, NCP: 0.5})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var o output
		if protocol.Unmarshal(b, &o) != nil {
			return
		}
		reqs := []anonymize.Requirement{{QID: []string{"a"}, K: 2}}
		_, _ = o.Table.MinGroups(reqs)
		_ = o.Table.CheckDistinctL(reqs, "s", 2)
	})
}
