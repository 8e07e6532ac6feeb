package sim

import (
	"context"
	"slices"
	"sync"
	"testing"
)

// Jobs submit one after another: those that use the key first when it is
// installed, else last, each group in batch order; a job that ends before
// submitting (its deferred pass) lets the next one go.
func TestTurns(t *testing.T) {
	usesKey := []bool{false, true, false, true, false}
	for _, tc := range []struct {
		keyFirst bool
		want     []int
	}{
		{true, []int{1, 3, 0, 2, 4}},
		{false, []int{0, 2, 4, 1, 3}},
	} {
		turn := newTurns(usesKey, tc.keyFirst)
		var mu sync.Mutex
		var got []int
		var wg sync.WaitGroup
		for i := range usesKey {
			wg.Go(func() {
				defer turn.pass[i]()
				if i == 2 {
					return // fails before its turn, as a job whose stage cannot be made
				}
				if err := turn.await(context.Background(), i); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				got = append(got, i)
				mu.Unlock()
				turn.pass[i]()
			})
		}
		wg.Wait()
		want := slices.DeleteFunc(slices.Clone(tc.want), func(i int) bool { return i == 2 })
		if !slices.Equal(got, want) {
			t.Errorf("key first %v: submitted in order %v, want %v", tc.keyFirst, got, want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := newTurns([]bool{false, false}, false).await(ctx, 1); err == nil {
		t.Error("a job waited for its turn past its context")
	}
}
