package testkit

import (
	"testing"
	"time"
)

// RetryLonger runs a fault test whose verdict rests on a protocol budget
// (a party named missing when its message has not come within its hop, a
// party that learns something only at a deadline): every honest party
// must do each hop's work within the budget, which a loaded 2-core
// machine can miss. try runs the whole scenario, on fresh nodes, with
// budget d and says what is wrong with its verdict (nil if nothing); a
// wrong verdict is tried again with a budget four times longer, three
// tries in all, and only the last try's is a failure. A defect gives the
// wrong verdict at every budget; a starved machine, at the shortest. The
// test thus waits out a short budget in its expected path, not the longest
// a loaded machine could need.
func RetryLonger(t *testing.T, d time.Duration, try func(d time.Duration) error) {
	t.Helper()
	for i := 1; ; i++ {
		err := try(d)
		if err == nil {
			return
		}
		if i == 3 {
			t.Fatal(err)
		}
		t.Logf("with a budget of %v: %v; again with %v", d, err, 4*d)
		d *= 4
	}
}
