package publish

import (
	"testing"

	"github.com/cohortdm/cohort/wire"
)

// The coordinator decodes the party's output and checks its shape: no
// bytes may make it panic.
func FuzzOutput(f *testing.F) {
	b, err := wire.Marshal(&output{Format: "csv", Transactions: 1, NuggetsBefore: "12",
		Published: publication{Format: "csv", Items: []string{"a"}, Trans: [][]uint32{{0}}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		var o output
		if wire.Unmarshal(b, &o) != nil {
			return
		}
		if o.check() == nil {
			if _, _, err := o.Published.database(); err != nil {
				t.Fatalf("accepted output does not decode: %v", err)
			}
		}
	})
}
