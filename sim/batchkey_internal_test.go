package sim

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/cohortdm/cohort/node"
)

// A key read from the cache counts as dealt while it is still being
// installed, so that the batch's order (key users first) does not hang
// on the copy racing the cluster's start; a key whose dealing failed
// never does.
func TestBatchKeyDealtBeforeInstalled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	release := make(chan struct{})
	b := &batch{names: []string{"a"}, usesKey: []bool{true}}
	k := b.dealKey(BatchOptions{Setup: func([]string) (func(name, dataDir string) error, error) {
		return func(string, string) error { <-release; return nil }, nil
	}})
	k.start(&Cluster{Names: []string{"a"}, configs: map[string]*node.Config{"a": {DataDir: t.TempDir()}}})
	select {
	case <-k.dealt:
	case <-ctx.Done():
		t.Fatal("the cached key never counted as dealt")
	}
	if !k.dealtNow() {
		t.Error("dealtNow is false once dealt")
	}
	select {
	case <-k.installed:
		t.Fatal("installed while its install is held")
	default:
	}
	close(release)
	if err := k.ready(ctx); err != nil {
		t.Fatal(err)
	}

	failed := b.dealKey(BatchOptions{Setup: func([]string) (func(name, dataDir string) error, error) {
		return nil, errors.New("no key")
	}})
	failed.abort()
	if err := failed.ready(ctx); err == nil {
		t.Fatal("a failed dealing is ready")
	}
	if failed.dealtNow() {
		t.Error("a failed dealing counts as dealt")
	}
}
