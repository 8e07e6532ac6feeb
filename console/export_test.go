package console

import (
	"bytes"
	"compress/gzip"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
)

// exportedBytes is the index's export of what filter selects, joined.
func exportedBytes(t testing.TB, idx *ledgerIndex, f exportFormat, filter ledgerFilter) []byte {
	t.Helper()
	parts, size, err := idx.exported(f, filter)
	if err != nil {
		t.Fatal(err)
	}
	b := bytes.Join(parts, nil)
	if int64(len(b)) != size {
		t.Fatalf("%s export: %d bytes, says %d", f.ext(), len(b), size)
	}
	return b
}

// renderedEveryRow is the export as the console wrote it before it kept
// the export rendered (commit 1a34c97): every row selected, encoded on
// each request. The rendered export must equal it byte for byte.
func renderedEveryRow(idx *ledgerIndex, f exportFormat, filter ledgerFilter) []byte {
	rows := idx.rowsFor(filter)
	var b bytes.Buffer
	if f == formatJSONL {
		enc := json.NewEncoder(&b)
		for _, row := range rows {
			enc.Encode(row)
		}
		return b.Bytes()
	}
	cw := csv.NewWriter(&b)
	cw.Write([]string{"job", "peer", "disclosure", "messages", "bytes"})
	for _, row := range rows {
		cw.Write([]string{cell(row.Job), cell(row.Peer), cell(row.Disclosure), strconv.Itoa(row.Messages), strconv.FormatInt(row.Bytes, 10)})
	}
	cw.Flush()
	return b.Bytes()
}

// checkExports compares every format's export with renderedEveryRow,
// for each filter.
func checkExports(t testing.TB, idx *ledgerIndex, filters ...ledgerFilter) {
	t.Helper()
	for _, filter := range append(filters, ledgerFilter{}) {
		for f := range exportFormats {
			got, want := exportedBytes(t, idx, f, filter), renderedEveryRow(idx, f, filter)
			if !bytes.Equal(got, want) {
				t.Fatalf("%s export, filter %+v: %d bytes differ from the %d rendered row by row\n%.300q\n%.300q", f.ext(), filter, len(got), len(want), got, want)
			}
		}
	}
}

// The rendered exports equal the rows rendered one by one, byte for byte,
// with cells that need quoting or would read as formulas, over several
// chunks, after rows of the first chunk and of the last change and rows
// are added (no chunk is left stale), with and without filters.
func TestExportsEqualEveryRowRendered(t *testing.T) {
	path, led := openLedger(t)
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	peers := []string{"org1", "a,b", `q"uote`, "=cmd", " lead"}
	discs := []string{"ciphertext", "-x", "control"}
	send := func(job string, i int) {
		t.Helper()
		e := audit.Entry{Time: at, Job: job, Phase: "p", Peer: peers[i%len(peers)], Type: "job/output", Bytes: 1 + i%97, Disclosure: discs[i%len(discs)]}
		if err := led.Append(e); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Second)
	}
	idx := newLedgerIndex(path)
	checkExports(t, idx)
	for i := range 3*exportChunkRows + 17 {
		send(fmt.Sprintf("job-%d", i/3), i)
	}
	filters := []ledgerFilter{{Job: "job-5"}, {Peer: "a,b"}, {Disclosure: "-x"}, {Peer: "=cmd", Disclosure: "control"}, {Job: "none"}}
	checkExports(t, idx, filters...)
	if n := len(idx.rowsFor(ledgerFilter{})); n <= 3*exportChunkRows {
		t.Fatalf("%d rows, want more than three chunks", n)
	}
	// An old row (first chunk) and the last change; new rows follow.
	before := exportedBytes(t, idx, formatCSV, ledgerFilter{})
	send("job-0", 0)
	send(fmt.Sprintf("job-%d", (3*exportChunkRows+16)/3), 3*exportChunkRows+16)
	for i := range 5 {
		send("late", i)
	}
	checkExports(t, idx, append(filters, ledgerFilter{Job: "late"}, ledgerFilter{Job: "job-0"})...)
	if bytes.Equal(before, exportedBytes(t, idx, formatCSV, ledgerFilter{})) {
		t.Fatal("the export did not change with the ledger")
	}
}

// tickLedger writes a ledger like the one BenchmarkConsolePages leaves on
// a follower after n tick jobs: per job a policy decision and two outputs
// of 106 bytes to the coordinator, so one row a job of 44 bytes of CSV, as
// in that benchmark's 10-job case (its 100,000-job ledger had 2.9 lines a
// job and 35.5 bytes of CSV a job).
func tickLedger(tb testing.TB, n int) string {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "audit.jsonl")
	var b strings.Builder
	at := time.Date(2026, 11, 29, 16, 22, 0, 0, time.UTC)
	for i := range n {
		job := fmt.Sprintf("20261129-162200-%08x", uint32(uint64(i)*0x9e3779b97f4a7c15>>32))
		ts := at.Add(time.Duration(i) * 23 * time.Millisecond).Format(time.RFC3339Nano)
		fmt.Fprintf(&b, `{"time":%q,"job":%q,"phase":"","peer":"","type":"policy/decision","bytes":0,"disclosure":"control","decision":"accepted"}`+"\n", ts, job)
		for range 2 {
			fmt.Fprintf(&b, `{"time":%q,"job":%q,"phase":"tick","peer":"org1","type":"job/output","bytes":106,"disclosure":"control"}`+"\n", ts, job)
		}
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o640); err != nil {
		tb.Fatal(err)
	}
	return path
}

// BenchmarkExportWholeLedger times the whole CSV export of a ledger of
// 100,000 tick jobs, rendered as kept against rendered row by row as
// before, without HTTP:
//
//	go test ./console -run '^$' -bench ExportWholeLedger -benchtime 100x
func BenchmarkExportWholeLedger(b *testing.B) {
	idx := newLedgerIndex(tickLedger(b, 100000))
	checkExports(b, idx)
	b.Run("kept", func(b *testing.B) {
		for b.Loop() {
			parts, _, err := idx.exported(formatCSV, ledgerFilter{})
			if err != nil {
				b.Fatal(err)
			}
			var n int
			for _, p := range parts {
				n += len(p)
			}
			b.SetBytes(int64(n))
		}
	})
	b.Run("every-row", func(b *testing.B) {
		for b.Loop() {
			b.SetBytes(int64(len(renderedEveryRow(idx, formatCSV, ledgerFilter{}))))
		}
	})
}

// BenchmarkExportOverHTTP times the whole CSV export of a ledger of
// 100,000 tick jobs (4.4 MB) over HTTP on loopback, as the console writes
// it (its slices, one Write each) against two ways it might: the slices
// joined into one Write, and gzip at its fastest level (for a client that
// accepts it); each read by a client that discards the body, as a browser
// saving it to disk, or keeps it whole:
//
//	go test ./console -run '^$' -bench ExportOverHTTP -benchtime 100x
func BenchmarkExportOverHTTP(b *testing.B) {
	idx := newLedgerIndex(tickLedger(b, 100000))
	_, want, err := idx.exported(formatCSV, ledgerFilter{})
	if err != nil {
		b.Fatal(err)
	}
	ways := []struct {
		name  string
		write func(w http.ResponseWriter, parts [][]byte, size int64) error
	}{
		{"slices", func(w http.ResponseWriter, parts [][]byte, size int64) error { writeParts(w, parts, size); return nil }},
		{"joined", func(w http.ResponseWriter, parts [][]byte, size int64) error {
			w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
			_, err := w.Write(bytes.Join(parts, nil))
			return err
		}},
		{"gzip", func(w http.ResponseWriter, parts [][]byte, _ int64) error {
			w.Header().Set("Content-Encoding", "gzip")
			z, err := gzip.NewWriterLevel(w, gzip.BestSpeed)
			if err != nil {
				return err
			}
			for _, p := range parts {
				if _, err := z.Write(p); err != nil {
					return err
				}
			}
			return z.Close()
		}},
	}
	for _, way := range ways {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			parts, size, err := idx.exported(formatCSV, ledgerFilter{})
			if err == nil {
				err = way.write(w, parts, size)
			}
			if err != nil {
				b.Error(err)
			}
		}))
		for _, keep := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/keep=%v", way.name, keep), func(b *testing.B) {
				// The transport asks for gzip and decodes it.
				for b.Loop() {
					res, err := srv.Client().Get(srv.URL)
					if err != nil {
						b.Fatal(err)
					}
					var n int64
					if keep {
						var body []byte
						body, err = io.ReadAll(res.Body)
						n = int64(len(body))
					} else {
						n, err = io.Copy(io.Discard, res.Body)
					}
					res.Body.Close()
					if err != nil || n != want {
						b.Fatalf("read %d bytes: %v", n, err)
					}
				}
			})
		}
		srv.Close()
	}
}
