package console_test

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cohortdm/cohort/internal/testkit/simtest"
	"github.com/cohortdm/cohort/job"
	"github.com/cohortdm/cohort/node"
	"github.com/cohortdm/cohort/sim"
	"github.com/cohortdm/cohort/wire"
)

// The console's figures: each page's response time and size on a node
// holding 10 and 10,000 finished jobs.
//
//	go test ./console -run '^$' -bench ConsolePages -benchtime 100x
//
// The load is 10 or -console.jobs jobs of tick, a kind of one step in
// which every party of three sends the coordinator one byte: real jobs
// through the node's runtime (admit phase, Raft log, ledger), cheap enough
// that ten thousand finish in minutes. Each page is timed as the browser
// gets it, over HTTP on loopback with a signed-in session; the median and
// 95th percentile are reported per page.

var benchJobs = flag.Int("console.jobs", 10000, "finished jobs on the node in BenchmarkConsolePages' larger case")

// benchLedgerJobs adds a case: 10 real jobs, and the ledger lines of this
// many more tick jobs written to the follower's ledger, a ledger as large
// as a long run's in seconds (the replicated log keeps its 10 jobs).
var benchLedgerJobs = flag.Int("console.ledgerjobs", 0, "tick jobs' ledger lines BenchmarkConsolePages writes in its ledger case (0: no such case)")

type tick struct{}

func (tick) Validate(*job.Spec) error { return nil }
func (tick) Coordinate(ctx context.Context, c job.Coordinator) (job.Result, error) {
	done, err := tickRound.Run(ctx, c, job.Call[struct{}]{}, func(o *job.Outcome[struct{}]) (int, error) {
		if len(o.Failed) > 0 {
			return 0, fmt.Errorf("%d parties failed", len(o.Failed))
		}
		return len(o.Results), nil
	})
	if err != nil {
		return nil, err
	}
	return job.Result{"answered": done.Decision}, nil
}

// tickRound is tick's one round: an empty output (one byte of msgpack).
var tickRound = job.Round[struct{}, struct{}, int]{Phase: "tick"}

func (tick) Open(context.Context, job.Participant) (job.Session, error) { return tickSession{}, nil }
func (tick) OutputDisclosure(job.Step) wire.Disclosure                  { return wire.DiscloseControl }

type tickSession struct{}

func (tickSession) Step(_ context.Context, step job.Step) ([]byte, error) {
	return tickRound.Serve(step, func(struct{}) (struct{}, error) { return struct{}{}, nil })
}
func (tickSession) Close() {}

const tickSpec = "kind: tick\nparties: [{name: org1}, {name: org2}, {name: org3}]\n"

func BenchmarkConsolePages(b *testing.B) {
	cases := []struct{ jobs, ledgerJobs int }{{10, 0}, {*benchJobs, 0}}
	if *benchLedgerJobs > 0 {
		cases = append(cases, struct{ jobs, ledgerJobs int }{10, *benchLedgerJobs})
	}
	for _, cs := range cases {
		name := fmt.Sprintf("jobs=%d", cs.jobs)
		if cs.ledgerJobs > 0 {
			name = fmt.Sprintf("ledger=%d", cs.ledgerJobs)
		}
		jobs := cs.jobs
		b.Run(name, func(b *testing.B) {
			o, ids := loadedNode(b, jobs, cs.ledgerJobs)
			mid := ids[len(ids)/2]
			last := strconv.Itoa((jobs + 49) / 50)
			for _, p := range []struct{ name, path string }{
				{"jobs", "/console/jobs"},
				{"jobs-done-last-page", "/console/jobs?state=done&page=" + last},
				{"job", "/console/jobs/" + mid},
				{"disclosures", "/console/disclosures"},
				{"disclosures-one-peer", "/console/disclosures?peer=org1"},
				{"disclosures-one-job", "/console/disclosures?job=" + mid},
				{"approvals", "/console/approvals"},
				{"consortium", "/console/consortium"},
				{"node", "/console/node"},
				{"export-csv", "/console/disclosures.csv"},
				{"export-csv-one-kind", "/console/disclosures.csv?disclosure=control"},
				{"export-jsonl", "/console/disclosures.jsonl"},
			} {
				b.Run(p.name, func(b *testing.B) { timePage(b, o, p.path) })
			}
		})
	}
}

// download GETs path and counts its body's bytes without keeping them, as
// a browser saving a download to disk would: the client runs in the
// node's process, and a body kept (and copied to a string, as o.get does)
// is 9 to 13 MB of garbage a request for the 4.4 MB export, which made
// the node's collector mark its heap the more often (docs/console.md).
func (o *operator) download(path string) (int, int64) {
	res, err := o.client.Get(o.base + path)
	if err != nil {
		o.t.Fatal(err)
	}
	defer res.Body.Close()
	n, err := io.Copy(io.Discard, res.Body)
	if err != nil {
		o.t.Fatal(err)
	}
	return res.StatusCode, n
}

// timePage GETs one page b.N times and reports its median and 95th
// percentile response time and its size.
func timePage(b *testing.B, o *operator, path string) {
	var took []time.Duration
	var size int64
	for b.Loop() {
		t0 := time.Now()
		status, n := o.download(path)
		took = append(took, time.Since(t0))
		if status != http.StatusOK {
			b.Fatalf("GET %s: %d", path, status)
		}
		size = n
	}
	slices.Sort(took)
	b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-median")
	b.ReportMetric(float64(took[len(took)*95/100].Microseconds())/1000, "ms-p95")
	b.ReportMetric(float64(size), "bytes")
}

// benchSubmitters is how many jobs loadedNode keeps in flight (and the
// nodes' max_jobs).
var benchSubmitters = flag.Int("console.submitters", 16, "jobs BenchmarkConsolePages keeps in flight while it loads the node")

// loadedNode starts three nodes, runs n tick jobs to their end, and signs
// in to the console of org3, a follower.
func loadedNode(b *testing.B, n, ledgerJobs int) (*operator, []string) {
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Minute) // as the documented -timeout
	b.Cleanup(cancel)
	submitters := *benchSubmitters
	c := simtest.StartCluster(b, ctx, names, sim.ClusterOptions{Kinds: job.Registry{"tick": tick{}}, MaxJobs: submitters})
	leader, err := c.WaitLeader(ctx)
	if err != nil {
		b.Fatal(err)
	}
	t0 := time.Now()
	ids := make([]string, n)
	var wg sync.WaitGroup
	var failed atomic.Int64
	errs := make(chan error, submitters)
	for w := range submitters {
		wg.Go(func() {
			for i := w; i < n; i += submitters {
				id, err := leader.Submit(ctx, []byte(tickSpec))
				if err == nil {
					var rec *node.JobRecord
					if rec, err = leader.Wait(ctx, id); err == nil && rec.Status != node.StatusDone {
						failed.Add(1) // a finished job all the same (a loaded machine's timeouts)
					}
				}
				if err != nil {
					errs <- err
					return
				}
				ids[i] = id
			}
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	watcherName := busiestLedger(b, c)
	watcher := c.Node(watcherName)
	// The log may hold a few jobs more than were submitted: a submission
	// the node retried under load is refused as a replay by the policy.
	waitFor(b, ctx, "the follower to apply every job", func() bool { st := watcher.Status(); return st.Jobs >= n && st.Running == 0 })
	took := time.Since(t0)
	b.Logf("%d jobs finished in %s, %.1f a second, %d in flight (%d of them failed; %d jobs in the log)",
		n, took.Round(time.Millisecond), float64(n)/took.Seconds(), submitters, failed.Load(), watcher.Status().Jobs)
	if ledgerJobs > 0 {
		appendTickLedger(b, c.LedgerPath(watcherName), ledgerJobs)
	}
	srv := httptestServer(b, watcher)
	o := signIn(b, srv, watcher.APIToken())
	t0 = time.Now()
	if res, _ := o.get("/console/disclosures"); res.StatusCode != http.StatusOK {
		b.Fatalf("disclosures: %s", res.Status)
	}
	b.Logf("first disclosures page (indexes the whole ledger): %s", time.Since(t0).Round(time.Microsecond))
	return o, ids
}

// busiestLedger returns the member whose ledger has the most job outputs.
// A member writes a tick job's output lines only when it is not the job's
// coordinator, the Raft leader, which sends itself nothing; leadership
// may move under load, and a run that timed the console of whichever
// follower the leader was at the end (29 Nov 2026) found a quarter of
// the rows a job-per-row ledger would have. So the console timed is that
// of the member with the most rows, and each member's counts are logged.
func busiestLedger(b *testing.B, c *sim.Cluster) string {
	best, most := "", -1
	b.Logf("leader at the end of the load: %s", c.Node(names[0]).Leader())
	for _, name := range names {
		led, err := os.ReadFile(c.LedgerPath(name))
		if err != nil {
			b.Fatal(err)
		}
		outputs := strings.Count(string(led), `"type":"job/output"`)
		b.Logf("%s: ledger %d bytes, %d job outputs", name, len(led), outputs)
		if outputs > most {
			best, most = name, outputs
		}
	}
	return best
}

// appendTickLedger appends the lines a follower's ledger gains from n tick
// jobs, as the 100,000-job run left them: per job a policy decision and two
// outputs of 106 bytes to the coordinator, one row of the CSV export.
func appendTickLedger(b *testing.B, path string, n int) {
	var buf strings.Builder
	at := time.Now().UTC()
	for i := range n {
		job := fmt.Sprintf("20261129-162200-%08x", uint32(uint64(i)*0x9e3779b97f4a7c15>>32))
		ts := at.Add(time.Duration(i) * 23 * time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&buf, `{"time":%q,"job":%q,"phase":"","peer":"","type":"policy/decision","bytes":0,"disclosure":"control","decision":"accepted"}`+"\n", ts, job)
		for range 2 {
			fmt.Fprintf(&buf, `{"time":%q,"job":%q,"phase":"tick","peer":"org1","type":"job/output","bytes":106,"disclosure":"control"}`+"\n", ts, job)
		}
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := f.WriteString(buf.String()); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
