package node

import (
	"bufio"
	"context"
	"maps"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// memorySample is how often a node busy with jobs reads its resident
// memory: often enough to see a job's peak of a second or more, cheaply
// (one read of /proc/self/status, tens of microseconds).
const memorySample = 250 * time.Millisecond

// memoryBoard keeps, per job kind, the highest resident memory this
// node's process was seen at while a job of that kind ran here (as a
// party or as its coordinator): what an operator sizes a node by. In
// one process running several nodes (cohort sim, tests) every node
// reports the same process.
type memoryBoard struct {
	mu   sync.Mutex
	peak map[string]uint64 // kind → bytes
}

func newMemoryBoard() *memoryBoard { return &memoryBoard{peak: map[string]uint64{}} }

// see records one sample taken while jobs of these kinds ran.
func (b *memoryBoard) see(kinds []string, rss uint64) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, k := range kinds {
		b.peak[k] = max(b.peak[k], rss)
	}
}

func (b *memoryBoard) peaks() map[string]uint64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return maps.Clone(b.peak)
}

// processMemory reads the process's resident memory now and its peak
// since it started (Linux /proc/self/status, VmRSS and VmHWM); ok is
// false where that file does not exist.
func processMemory() (rss, peak uint64, ok bool) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, found := strings.Cut(sc.Text(), ":")
		if !found || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		fields := strings.Fields(rest) // "123456 kB"
		if len(fields) != 2 || fields[1] != "kB" {
			continue
		}
		kb, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		if name == "VmRSS" {
			rss, ok = kb<<10, true
		} else {
			peak = kb << 10
		}
	}
	return rss, peak, ok
}

// sampleMemory records the process's memory against the kinds of the
// jobs this node works on, every memorySample, until ctx ends.
func (r *jobRunner) sampleMemory(ctx context.Context) {
	tick := time.NewTicker(memorySample)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		kinds := r.busyKinds()
		if len(kinds) == 0 {
			continue
		}
		if rss, _, ok := processMemory(); ok {
			r.Memory.see(kinds, rss)
			for k, v := range r.Memory.peaks() {
				r.Metrics.jobPeakRSS.WithLabelValues(k).Set(float64(v))
			}
		}
	}
}

// busyKinds are the kinds of the jobs this node coordinates or takes
// part in now.
func (r *jobRunner) busyKinds() []string {
	r.mu.Lock()
	ids := make([]string, 0, len(r.workers)+len(r.coordinating))
	for id := range r.workers {
		ids = append(ids, id)
	}
	for id := range r.coordinating {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	seen := map[string]bool{}
	var kinds []string
	for _, id := range ids {
		if k := r.FSM.jobs.Kind(id); k != "" && !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	return kinds
}
