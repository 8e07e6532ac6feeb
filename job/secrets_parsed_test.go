package job_test

import (
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/cohortdm/cohort/job"
)

// Callers that ask for the same files' parse at once share one parse; a
// changed file is parsed again; a failed parse is not kept.
func TestDirSecretsParsedOnce(t *testing.T) {
	t.Parallel()
	s := job.DirSecrets(t.TempDir())
	if err := s.WriteSecret("keys/k", []byte("one")); err != nil {
		t.Fatal(err)
	}
	var parses atomic.Int32
	const callers = 8
	// The parse ends once every caller has asked: one that asks while it
	// runs waits for it, and none parses again.
	var asked sync.WaitGroup
	asked.Add(callers)
	parse := func(c [][]byte) (any, error) {
		parses.Add(1)
		asked.Wait()
		return string(c[0]), nil
	}
	var wg sync.WaitGroup
	got := make([]any, callers)
	for i := range callers {
		wg.Go(func() {
			asked.Done()
			v, err := s.Parsed([]string{"keys/k"}, parse)
			if err != nil {
				t.Error(err)
			}
			got[i] = v
		})
	}
	wg.Wait()
	if n := parses.Load(); n != 1 {
		t.Errorf("%d parses for %d callers at once, want 1", n, callers)
	}
	for i, v := range got {
		if v != "one" {
			t.Errorf("caller %d got %v", i, v)
		}
	}

	if err := s.WriteSecret("keys/k", []byte("two")); err != nil {
		t.Fatal(err)
	}
	if v, err := s.Parsed([]string{"keys/k"}, parse); err != nil || v != "two" || parses.Load() != 2 {
		t.Errorf("after the file changed: %v, %v, %d parses", v, err, parses.Load())
	}

	fail := errors.New("bad key")
	failing := func([][]byte) (any, error) { parses.Add(1); return nil, fail }
	if err := s.WriteSecret("keys/bad", []byte("x")); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if _, err := s.Parsed([]string{"keys/bad"}, failing); !errors.Is(err, fail) {
			t.Errorf("a failed parse returned %v", err)
		}
	}
	if n := parses.Load(); n != 4 {
		t.Errorf("%d parses, want 4: a failed parse is tried again", n)
	}
}
