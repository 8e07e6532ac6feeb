package console

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cohortdm/cohort/audit"
)

// openLedger opens a fresh audit ledger in a temporary directory, closed
// when t ends, and returns its path.
func openLedger(t *testing.T) (string, *audit.Ledger) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	led, err := audit.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { led.Close() })
	return path, led
}

// The index follows a growing ledger line by line and agrees with
// audit.Summarize over the whole file; a line still being written waits,
// a bad line stops it (the view says where), a replaced file starts over.
func TestLedgerIndexFollowsTheFile(t *testing.T) {
	path, led := openLedger(t)
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	send := func(job, peer, disc string, n int) {
		t.Helper()
		if err := led.Append(audit.Entry{Time: at, Job: job, Phase: "p", Peer: peer, Type: "job/output", Bytes: n, Disclosure: disc}); err != nil {
			t.Fatal(err)
		}
		at = at.Add(time.Minute)
	}
	idx := newLedgerIndex(path)
	if rows := idx.rowsFor(ledgerFilter{}); len(rows) != 0 {
		t.Fatalf("an empty ledger has rows %v", rows)
	}
	send("j1", "a", "ciphertext", 100)
	send("j1", "b", "ciphertext", 50)
	if err := led.Append(audit.Entry{Job: "j1", Type: audit.DecisionType, Disclosure: "control", Decision: "accepted"}); err != nil {
		t.Fatal(err)
	}
	checkAgainstFile(t, idx, path)
	send("j1", "a", "ciphertext", 10)
	send("j2", "a", "decryption-share", 7)
	checkAgainstFile(t, idx, path)
	if j := idx.job("j1"); len(j.Rows) != 2 || len(j.Decisions) != 1 || j.Coordinators[stepRef{"p", 0}] != "a" {
		t.Fatalf("job j1: %+v", j)
	}

	// A line still being written is left for later.
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	line := `{"time":"2026-11-01T11:00:00Z","job":"j3","phase":"p","peer":"b","type":"x","bytes":5,"disclosure":"score"}`
	f.WriteString(line[:40])
	checkRows(t, idx, 3)
	f.WriteString(line[40:] + "\n")
	checkRows(t, idx, 4)

	// A bad line stops the index there, and the view says which.
	f.WriteString("{not json\n" + line + "\n")
	f.Close()
	checkRows(t, idx, 4)
	idx.read(func(l *ledgerIndex) {
		if s := l.state(); !strings.HasPrefix(s.Bad, "line 7:") || s.Lines != 6 {
			t.Fatalf("after a bad line: %+v", s)
		}
	})

	// A shorter file (replaced) is read again from its start.
	if err := os.WriteFile(path, []byte(line+"\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	idx = newLedgerIndex(path)
	checkRows(t, idx, 1)
}

func checkRows(t *testing.T, idx *ledgerIndex, n int) {
	t.Helper()
	if rows := idx.rowsFor(ledgerFilter{}); len(rows) != n {
		t.Fatalf("%d rows, want %d: %v", len(rows), n, rows)
	}
}

// checkAgainstFile compares the index with audit.Summarize of the file.
func checkAgainstFile(t *testing.T, idx *ledgerIndex, path string) {
	t.Helper()
	es, err := audit.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := audit.Summarize(es)
	got := idx.rowsFor(ledgerFilter{})
	slices.SortFunc(got, func(a, b audit.Row) int {
		return strings.Compare(a.Job+" "+a.Peer+" "+a.Disclosure, b.Job+" "+b.Peer+" "+b.Disclosure)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("index %v\nledger %v", got, want)
	}
	peerA := idx.rowsFor(ledgerFilter{Peer: "a", Disclosure: "ciphertext"})
	if len(peerA) != 1 || peerA[0].Bytes != audit.JobBytes(slices.DeleteFunc(slices.Clone(es), func(e audit.Entry) bool {
		return e.Peer != "a" || e.Disclosure != "ciphertext"
	}), "j1") {
		t.Fatalf("peer a, ciphertext: %v", peerA)
	}
}

// The chart over time has at most overTimeBuckets columns and an axis, and
// follows the filter; the rows keep every byte.
func TestOverTimeKeepsEveryByte(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	var b strings.Builder
	at := time.Date(2026, 11, 1, 10, 0, 0, 0, time.UTC)
	var total int64
	for i := range 500 {
		n := 10 + i%7
		total += int64(n)
		peer := []string{"a", "b"}[i%2]
		b.WriteString(`{"time":"` + at.Add(time.Duration(i)*37*time.Second).Format(time.RFC3339) + `","job":"j","phase":"p","peer":"` + peer +
			`","type":"x","bytes":` + strconv.Itoa(n) + `,"disclosure":"ciphertext"}` + "\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o640); err != nil {
		t.Fatal(err)
	}
	idx := newLedgerIndex(path)
	idx.read(func(l *ledgerIndex) {
		c, _ := l.overTime(ledgerFilter{})
		if len(c.Segs) == 0 || len(c.Segs) > overTimeBuckets {
			t.Fatalf("%d columns", len(c.Segs))
		}
		if len(c.Ticks) == 0 || c.Top == "" {
			t.Fatalf("no axis: %+v", c)
		}
		onlyB, _ := l.overTime(ledgerFilter{Peer: "b"})
		none, _ := l.overTime(ledgerFilter{Peer: "nobody"})
		if len(onlyB.Segs) == 0 || len(none.Segs) != 0 {
			t.Fatalf("filters: %d columns for b, %d for nobody", len(onlyB.Segs), len(none.Segs))
		}
	})
	if rows := idx.rowsFor(ledgerFilter{}); len(rows) != 2 || rows[0].Bytes+rows[1].Bytes != total {
		t.Fatalf("rows %v, want %d bytes", rows, total)
	}
}

// FuzzLedgerIndex feeds the index arbitrary files: it never panics, it
// holds exactly the lines before the first that audit cannot read, and
// its rendered exports equal its rows rendered one by one, and the
// disclosures view from its totals equals its rows added up.
func FuzzLedgerIndex(f *testing.F) {
	f.Add([]byte(`{"time":"2026-11-01T10:00:00Z","job":"j","phase":"p","peer":"a","type":"job/output","bytes":5,"disclosure":"ciphertext"}` + "\n"))
	f.Add([]byte(`{"time":"2026-11-01T10:00:00Z","job":"j","phase":"","peer":"","type":"policy/decision","bytes":0,"disclosure":"control","decision":"accepted"}` + "\n{\n"))
	f.Add([]byte("\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), "audit.jsonl")
		if err := os.WriteFile(path, b, 0o640); err != nil {
			t.Fatal(err)
		}
		idx := newLedgerIndex(path)
		got := idx.rowsFor(ledgerFilter{})
		var good []audit.Entry
		lines := strings.SplitAfter(string(b), "\n")
		for _, line := range lines {
			if !strings.HasSuffix(line, "\n") {
				break // not ended yet: not indexed
			}
			es, err := audit.ReadEntries(strings.NewReader(line))
			if err != nil || len(es) != 1 {
				break
			}
			good = append(good, es[0])
		}
		want := audit.Summarize(good)
		slices.SortFunc(got, func(a, b audit.Row) int {
			return strings.Compare(a.Job+"\x00"+a.Peer+"\x00"+a.Disclosure, b.Job+"\x00"+b.Peer+"\x00"+b.Disclosure)
		})
		if len(got) != len(want) || (len(want) > 0 && !slices.Equal(got, want)) {
			t.Fatalf("index %v, lines before the first bad one %v", got, want)
		}
		idx.read(func(l *ledgerIndex) {
			l.overTime(ledgerFilter{})
			l.overTime(ledgerFilter{Peer: "a", Job: "j"})
		})
		checkExports(t, idx, ledgerFilter{Peer: "a"}, ledgerFilter{Job: "j"})
		checkTotals(t, idx, ledgerFilter{Peer: "a"}, ledgerFilter{Job: "j"}, ledgerFilter{Disclosure: "ciphertext"})
	})
}
