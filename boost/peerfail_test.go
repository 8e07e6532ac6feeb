package boost_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// errInjected is the class holder's own failure: its gradients cannot
// leave (as when its ledger cannot record them).
var errInjected = errors.New("injected: the gradients cannot leave")

// refusing is boost.Kind whose class holder's sends of gradients fail.
type refusing struct {
	boost.Kind
	holder string
}

func (r refusing) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	if p.Self() != r.holder {
		return r.Kind.Open(ctx, p)
	}
	return r.Kind.Open(ctx, refusingSends{p})
}

type refusingSends struct{ job.Participant }

func (r refusingSends) Send(ctx context.Context, to string, m *wire.Message, d wire.Disclosure) error {
	if m.Type == boost.TypeGradients {
		return errInjected
	}
	return r.Participant.Send(ctx, to, m, d)
}

// TestHolderFailureEndsTheJob: over real nodes, the class holder fails a
// level while the parties below wait for its gradients. It tells them so,
// and the job fails with its error alone, long before the step timeouts
// (an hour each here: the test's context ends after five minutes).
func TestHolderFailureEndsTheJob(t *testing.T) {
	t.Parallel()
	c := chainCase(t, 3, 60)
	spec := writeSpec(t, c, "refused.yaml", map[string]any{"trees": 1, "max_depth": 2, "bins": 8})
	raw, err := spec.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(spec.Dir, "spec.yaml")
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	_, err = sim.Run(ctx, path, sim.RunOptions{Kinds: job.Registry{"boost": refusing{holder: "alice"}},
		Out: filepath.Join(t.TempDir(), "out"), Setup: simtest.ThresholdKeys(keyBits),
		Timing: node.Timing{SendMS: 10000, StepMS: 3_600_000}})
	if err == nil || ctx.Err() != nil {
		t.Fatalf("the job ended with %v (context: %v), want alice's failure at once", err, ctx.Err())
	}
	// A send that did not go through is a failure worth retrying, so boost
	// runs the level again (four attempts), each ended by alice's notice.
	msg := err.Error()
	if !strings.Contains(msg, "alice: level/0: ") || !strings.Contains(msg, errInjected.Error()) {
		t.Fatalf("the job's error %q does not name alice's failure", msg)
	}
	for _, cut := range []string{"bob: level/", "carol: level/", "party bob", "party carol"} {
		if strings.Contains(msg, cut) {
			t.Fatalf("the job's error %q blames a party alice's failure cut short (%q)", msg, cut)
		}
	}
}
