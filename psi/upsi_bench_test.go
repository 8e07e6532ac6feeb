package psi

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/cputime"
	"github.com/cohortdm/cohort/job"
)

// BenchmarkUnbalanced measures the unbalanced mode (docs/psi.md):
//
//	PSI_UPSI_N=16777216 PSI_UPSI_DIR=/var/tmp/upsi-bench nice go test ./psi -run '^$' -bench 'Unbalanced/offline' -benchtime 1x -timeout 3h
//	PSI_UPSI_N=16777216 PSI_UPSI_DIR=/var/tmp/upsi-bench go test ./psi -run '^$' -bench 'Unbalanced/online' -benchtime 1x -count 3 -timeout 1h
//
// PSI_UPSI_N is the server's set (default 2^16), PSI_UPSI_DIR keeps the
// server's and client's data dirs across runs (default a temporary
// directory), so the offline phase of 2^24 elements is paid once.
// offline builds the server's state (every core; skipped when the dir
// holds it fresh); online/n=1024/{cached,fetch} runs the whole online
// phase on one core (GOMAXPROCS=1) with a client of 1024 values, half of
// them the server's, whose filter is cached or fetched. Each party runs
// locked to its own OS thread, so its CPU time is read apart
// (cputime.Thread): client-ms, server-check-ms (the server's state
// checked against its set and loaded), server-oprf-ms (the exchange),
// and all-ms for the whole process (the garbage collector included).
func BenchmarkUnbalanced(b *testing.B) {
	n := 1 << 16
	if s := os.Getenv("PSI_UPSI_N"); s != "" {
		var err error
		if n, err = strconv.Atoi(s); err != nil {
			b.Fatal(err)
		}
	}
	dir := os.Getenv("PSI_UPSI_DIR")
	if dir == "" {
		dir = b.TempDir()
	}
	server := benchElems(0, n)
	srv := &Store{Secrets: job.DirSecrets(filepath.Join(dir, "server")), Scope: fmt.Sprint("bench:", n)}
	b.Run("offline", func(b *testing.B) {
		if s, err := srv.loadServer(server); err != nil || s != nil {
			b.Skip("the state is prepared already, or unreadable:", err)
		}
		for b.Loop() {
			t0, c0 := time.Now(), cputime.Used(b)
			s, err := srv.prepare(server)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(time.Since(t0).Seconds(), "offline-s")
			b.ReportMetric((cputime.Used(b) - c0).Seconds(), "offline-core-s")
			size := float64(filterLen(s.key.FN, s.key.H))
			b.ReportMetric(size/(1<<20), "filter-MiB")
			b.ReportMetric(8*size/float64(s.key.FN), "filter-bits/elem")
		}
	})
	client := benchElems(n-512, 1024)
	cli := &Store{Secrets: job.DirSecrets(filepath.Join(dir, "client"))}
	for _, fetch := range []bool{false, true} {
		name := map[bool]string{false: "cached", true: "fetch"}[fetch]
		b.Run("online/n=1024/"+name, func(b *testing.B) {
			if _, err := srv.prepare(server); err != nil {
				b.Fatal(err)
			}
			defer setProcs(1)()
			if !fetch { // warm the client's cache
				upBenchOnce(b, srv, cli, server, client)
			}
			for b.Loop() {
				c := cli
				if fetch {
					c = &Store{Secrets: job.DirSecrets(b.TempDir())}
				}
				upBenchOnce(b, srv, c, server, client)
			}
		})
	}
}

// upBenchOnce runs one online exchange over an in-memory network that
// counts bytes, and reports each party's CPU time and the bytes.
func upBenchOnce(b *testing.B, srv, cli *Store, server, client [][]byte) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	nets := newMemNets("client", "server")
	var c2s, s2c atomic.Int64
	cn := countNet{Network: nets["client"], n: &c2s}
	sn := countNet{Network: nets["server"], n: &s2c}
	cfg, _ := Config{Store: cli}.withDefaults()
	var clientCPU, checkCPU, oprfCPU time.Duration
	var ec, es error
	var res *Result
	var wg sync.WaitGroup
	t0, all0 := time.Now(), cputime.Used(b)
	wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := cputime.Thread(b)
		res, ec = upClient(ctx, cn, "server", cfg, client)
		clientCPU = cputime.Thread(b) - c0
	})
	wg.Go(func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		c0 := cputime.Thread(b)
		s, err := srv.prepare(server)
		c1 := cputime.Thread(b)
		checkCPU = c1 - c0
		if es = err; err == nil {
			scfg, _ := Config{Store: srv}.withDefaults()
			_, es = upServe(ctx, sn, "client", scfg, s)
		}
		oprfCPU = cputime.Thread(b) - c1
	})
	wg.Wait()
	wall, all := time.Since(t0), cputime.Used(b)-all0
	if ec != nil || es != nil {
		b.Fatal(ec, es)
	}
	if res.Size != 512 {
		b.Fatalf("%d shared values, want 512", res.Size)
	}
	b.ReportMetric(float64(wall.Microseconds())/1e3, "wall-ms")
	b.ReportMetric(float64(clientCPU.Microseconds())/1e3, "client-ms")
	b.ReportMetric(float64(checkCPU.Microseconds())/1e3, "server-check-ms")
	b.ReportMetric(float64(oprfCPU.Microseconds())/1e3, "server-oprf-ms")
	b.ReportMetric(float64(all.Microseconds())/1e3, "all-ms")
	b.ReportMetric(float64(c2s.Load()), "c2s-B")
	b.ReportMetric(float64(s2c.Load()), "s2c-B")
}

// countNet counts the bytes its party sends.
type countNet struct {
	Network
	n *atomic.Int64
}

func (c countNet) Send(ctx context.Context, to, typ string, body []byte) error {
	c.n.Add(int64(len(body)))
	return c.Network.Send(ctx, to, typ, body)
}
