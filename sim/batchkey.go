package sim

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// batchKey is a batch's consortium key, dealt and installed in the
// background: dealing (a safe-prime search) needs no node, so it runs
// while the nodes start and the jobs that need no key run.
type batchKey struct {
	cluster   chan *Cluster // the started cluster, or closed without one
	dealt     chan struct{} // closed once the key is dealt (or read from the cache)
	installed chan struct{} // closed once the key is installed, or failed
	done      chan struct{} // closed once the dealing's goroutine has ended
	err       error         // why it failed; read after installed is closed
}

// dealKey starts dealing the key for the batch's members if opts.Setup is
// set and some job's kind needs it; start or abort must follow.
func (b *batch) dealKey(opts BatchOptions) *batchKey {
	k := &batchKey{cluster: make(chan *Cluster, 1), dealt: make(chan struct{}), installed: make(chan struct{}), done: make(chan struct{})}
	if opts.Setup == nil || !slices.Contains(b.usesKey, true) {
		k.err = errors.New("sim: no key is dealt for this batch")
		close(k.installed)
		close(k.done)
		return k
	}
	names := slices.Clone(b.names)
	users := b.keyUsers()
	go func() {
		defer close(k.done)
		install, err := opts.Setup(names)
		if err == nil {
			close(k.dealt)
		}
		c, ok := <-k.cluster
		switch {
		case err != nil:
			k.err = err
		case !ok:
			k.err = errors.New("sim: the nodes did not start")
		default:
			k.err = installKey(c, install)
		}
		close(k.installed)
		if k.err == nil {
			readKeys(c, users)
		}
	}()
	return k
}

// keyUsers are the parties of the batch's jobs that decrypt with the key.
func (b *batch) keyUsers() []string {
	var users []string
	for i, spec := range b.specs {
		for _, name := range spec.PartyNames() {
			if b.usesKey[i] && !slices.Contains(users, name) {
				users = append(users, name)
			}
		}
	}
	return users
}

// readKeys has the named nodes parse the installed key into their caches
// (node.ReadKeys) at once, while the first jobs are admitted, rather than
// in their first step that decrypts. A node that cannot read it is left
// to say so in that step, which reads the key itself.
func readKeys(c *Cluster, names []string) {
	var wg sync.WaitGroup
	for _, name := range names {
		if n := c.Node(name); n != nil {
			wg.Go(func() { _ = n.ReadKeys() })
		}
	}
	wg.Wait()
}

// installKey installs each member's key share in its data dir, where a
// job's steps read it.
func installKey(c *Cluster, install func(name, dataDir string) error) error {
	for _, name := range c.Names {
		if err := install(name, c.DataDir(name)); err != nil {
			return err
		}
	}
	return nil
}

// start hands the started cluster to the dealing, which installs the key
// on its nodes once dealt.
func (k *batchKey) start(c *Cluster) { k.cluster <- c }

// abort tells the dealing that no cluster started.
func (k *batchKey) abort() { close(k.cluster) }

// ready waits until the key is installed on every node.
func (k *batchKey) ready(ctx context.Context) error {
	select {
	case <-k.installed:
		return k.err
	case <-ctx.Done():
		return fmt.Errorf("sim: waiting for the key to be dealt: %w", ctx.Err())
	}
}

// wait waits for the dealing (and the nodes' reading of the key) to
// end, so that it does not outlive the batch: it takes no context, and
// ends within seconds.
func (k *batchKey) wait() { <-k.done }
