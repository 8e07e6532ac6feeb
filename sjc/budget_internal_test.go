package sjc

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/job/jobtest"
)

// heldKind is sjc whose sessions, after every step, check what the
// session holds against its budget.
type heldKind struct {
	Kind
	mu     sync.Mutex
	broken []string // what broke the budget, and where
	most   int64    // the most any session held after a step
	spills int      // steps after which a session's last state had spilled nodes
}

func (k *heldKind) Open(ctx context.Context, p job.Participant) (job.Session, error) {
	s, err := k.Kind.Open(ctx, p)
	if err != nil {
		return nil, err
	}
	return &heldSession{session: s.(*session), k: k}, nil
}

type heldSession struct {
	*session
	k *heldKind
}

func (h *heldSession) Step(ctx context.Context, step job.Step) ([]byte, error) {
	out, err := h.session.Step(ctx, step)
	var sum int64
	spilled := false
	for _, st := range h.states {
		sum += heldBytes(st)
		for _, n := range st.Nodes {
			spilled = spilled || n.Spilled
		}
	}
	h.k.mu.Lock()
	defer h.k.mu.Unlock()
	where := fmt.Sprintf("party %s after %s/%d", h.p.Self(), step.Phase, step.Round)
	switch {
	case h.held != sum:
		h.k.broken = append(h.k.broken, fmt.Sprintf("%s: counts %d bytes held, its states hold %d", where, h.held, sum))
	case h.held > h.budget:
		h.k.broken = append(h.k.broken, fmt.Sprintf("%s: holds %d bytes, budget %d", where, h.held, h.budget))
	}
	h.k.most = max(h.k.most, h.held)
	if spilled {
		h.k.spills++
	}
	return out, err
}

// TestMemoryBudgetBoundsHeld: under budgets from one row to more than the
// root's partitions, no session holds more Parts than its budget after
// any step, its count of what it holds is what its states hold, and the
// budgets that cannot hold a root partition spill.
func TestMemoryBudgetBoundsHeld(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	spec := evilChain(t, nil)
	for _, budget := range []int64{rowBytes(2), 300, 1200, 1 << 20} {
		k := &heldKind{Kind: Kind{MemoryBudget: budget}}
		secrets := map[string]job.Secrets{}
		for _, p := range spec.PartyNames() {
			secrets[p] = job.DirSecrets(filepath.Join(t.TempDir(), p))
		}
		if _, err := jobtest.Run(ctx, k, spec, jobtest.Options{Secrets: secrets}); err != nil {
			t.Fatalf("budget %d: %v", budget, err)
		}
		if len(k.broken) > 0 {
			t.Fatalf("budget %d: %v", budget, k.broken)
		}
		// A table's root partition (60 rows or more, 20 bytes a row)
		// fits neither of the two smallest budgets; everything fits the
		// largest.
		if budget <= 300 && k.spills == 0 || budget == 1<<20 && k.spills > 0 {
			t.Errorf("budget %d: spilled after %d steps", budget, k.spills)
		}
		t.Logf("budget %d: at most %d bytes held, spilled after %d steps", budget, k.most, k.spills)
	}
}
