package audit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func entry(job, peer, disc string, n int) Entry {
	return Entry{Time: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Job: job, Phase: "p", Peer: peer,
		Type: "sum/local", Bytes: n, Disclosure: disc}
}

func TestLedgerRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "node.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	want := []Entry{entry("j1", "bob", "ciphertext", 10), entry("j1", "carol", "score", 3)}
	want[1].Round = 4
	for _, e := range want {
		if err := l.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	// Flushed per line: readable before Close.
	got, err := ReadFile(path)
	if err != nil || len(got) != 2 {
		t.Fatalf("before close: %d entries, %v", len(got), err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if err := l.Append(want[0]); !errors.Is(err, ErrClosed) {
		t.Fatalf("append after close: %v", err)
	}

	// Reopening appends rather than truncating.
	l, err = Open(path)
	if err != nil {
		t.Fatal(err)
	}
	stamped := Entry{Job: "j2", Peer: "bob", Type: "t", Disclosure: "control"}
	if err := l.Append(stamped); err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err = ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("%d entries after reopen, want 3", len(got))
	}
	for i, e := range want {
		if !got[i].Time.Equal(e.Time) || got[i].Job != e.Job || got[i].Peer != e.Peer ||
			got[i].Bytes != e.Bytes || got[i].Round != e.Round || got[i].Disclosure != e.Disclosure {
			t.Errorf("entry %d = %+v, want %+v", i, got[i], e)
		}
	}
	if got[2].Time.IsZero() || time.Since(got[2].Time) > time.Minute {
		t.Errorf("zero time not stamped: %v", got[2].Time)
	}
	raw, _ := os.ReadFile(path)
	if strings.Contains(string(raw), `"round":0`) {
		t.Errorf("round 0 not omitted:\n%s", raw)
	}
}

func TestAppendRefusesIncompleteEntries(t *testing.T) {
	l, err := Open(filepath.Join(t.TempDir(), "l.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	for _, tc := range []struct {
		name string
		mod  func(*Entry)
	}{
		{"peer", func(e *Entry) { e.Peer = "" }},
		{"type", func(e *Entry) { e.Type = "" }},
		{"disclosure", func(e *Entry) { e.Disclosure = "" }},
		{"negative bytes", func(e *Entry) { e.Bytes = -1 }},
		{"negative round", func(e *Entry) { e.Round = -1 }},
	} {
		e := entry("j", "bob", "score", 1)
		tc.mod(&e)
		if err := l.Append(e); err == nil || !strings.Contains(err.Error(), strings.Fields(tc.name)[0]) {
			t.Errorf("%s: err = %v", tc.name, err)
		}
	}
}

func TestTornLastLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	if err := os.WriteFile(path, []byte(`{"time":"2026-01-02T03:04:05Z","job":"j","pe`), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(entry("j", "bob", "score", 1)); err != nil {
		t.Fatal(err)
	}
	l.Close()
	_, err = ReadFile(path)
	if err == nil || !strings.Contains(err.Error(), "line 1:") || !strings.Contains(err.Error(), "l.jsonl") {
		t.Fatalf("torn line: %v", err)
	}
	raw, _ := os.ReadFile(path)
	lines := strings.Split(strings.TrimSuffix(string(raw), "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("torn line not isolated: %q", raw)
	}
	if _, err := ReadEntries(strings.NewReader(lines[1])); err != nil {
		t.Fatalf("line after torn one unreadable: %v", err)
	}
}

func TestConcurrentAppend(t *testing.T) {
	path := filepath.Join(t.TempDir(), "l.jsonl")
	l, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				if err := l.Append(entry("j", fmt.Sprintf("p%d", w), "score", i)); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != workers*each {
		t.Fatalf("%d entries, want %d", len(got), workers*each)
	}
}

func TestReadEntriesErrors(t *testing.T) {
	good := `{"time":"2026-01-02T03:04:05Z","job":"j","phase":"p","peer":"b","type":"t","bytes":1,"disclosure":"score"}`
	cases := []struct{ name, in, want string }{
		{"bad json", good + "\n{nope\n", "line 2"},
		{"unknown field", good + "\n" + strings.Replace(good, `"job"`, `"jab"`, 1) + "\n", "line 2"},
		{"trailing", good + " {}\n", "line 1: trailing"},
		{"blank", good + "\n\n" + good + "\n", "line 2: blank"},
		{"missing disclosure", strings.Replace(good, `"disclosure":"score"`, `"disclosure":""`, 1), "line 1: missing disclosure"},
		{"null", "null\n", "line 1: missing peer"},
		{"wrong type", strings.Replace(good, `"bytes":1`, `"bytes":"1"`, 1), "line 1"},
		{"bad time", strings.Replace(good, `2026-01-02T03:04:05Z`, `yesterday`, 1), "line 1"},
		{"too long", good + "\n" + strings.Repeat(" ", MaxLineBytes+1) + "\n", "line 2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			es, err := ReadEntries(strings.NewReader(c.in))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want mention of %q (entries %v)", err, c.want, es)
			}
		})
	}
	es, err := ReadEntries(strings.NewReader(good + "\r\n" + good))
	if err != nil || len(es) != 2 {
		t.Fatalf("CRLF and missing final newline: %v, %d entries", err, len(es))
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

func TestSummarizeAndTable(t *testing.T) {
	es := []Entry{
		entry("j2", "bob", "score", 5),
		entry("j1", "carol", "ciphertext", 100),
		entry("j1", "bob", "ciphertext", 7),
		entry("j1", "bob", "ciphertext", 3),
		entry("j1", "bob", "decryption-share", 1),
		entry("", "bob", "control", 2),
	}
	rows := Summarize(es)
	want := []Row{
		{"", "bob", "control", 1, 2},
		{"j1", "bob", "ciphertext", 2, 10},
		{"j1", "bob", "decryption-share", 1, 1},
		{"j1", "carol", "ciphertext", 1, 100},
		{"j2", "bob", "score", 1, 5},
	}
	if fmt.Sprint(rows) != fmt.Sprint(want) {
		t.Fatalf("rows\n%v\nwant\n%v", rows, want)
	}
	if Summarize(nil) != nil {
		t.Fatal("summary of nothing is not empty")
	}

	var buf bytes.Buffer
	if err := WriteTable(&buf, rows); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	wantLines := []string{
		"JOB  PEER     DISCLOSURE        MESSAGES  BYTES",
		"-    bob      control           1         2",
		"-    (total)                    1         2",
		"j1   bob      ciphertext        2         10",
		"j1   bob      decryption-share  1         1",
		"j1   carol    ciphertext        1         100",
		"j1   (total)                    4         111",
		"j2   bob      score             1         5",
		"j2   (total)                    1         5",
	}
	if got := strings.Split(strings.TrimRight(out, "\n"), "\n"); strings.Join(got, "\n") != strings.Join(wantLines, "\n") {
		t.Fatalf("table:\n%s\nwant:\n%s", out, strings.Join(wantLines, "\n"))
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("pipe closed") }

func TestWriteTableError(t *testing.T) {
	if err := WriteTable(failWriter{}, []Row{{"j", "p", "d", 1, 1}}); err == nil || !strings.Contains(err.Error(), "pipe closed") {
		t.Fatalf("err = %v", err)
	}
}

func FuzzReadEntries(f *testing.F) {
	f.Add([]byte(`{"time":"2026-01-02T03:04:05Z","job":"j","phase":"p","peer":"b","type":"t","bytes":1,"disclosure":"score","round":2}` + "\n"))
	f.Add([]byte("{}\n\n"))
	f.Add([]byte(`{"peer":"b","type":"t","disclosure":"d","bytes":-1}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ReadEntries(bytes.NewReader(data))
		if err != nil {
			if !strings.Contains(err.Error(), "line ") {
				t.Fatalf("error without line number: %v", err)
			}
			return
		}
		for _, e := range es {
			if e.validate() != nil {
				t.Fatalf("invalid entry accepted: %+v", e)
			}
		}
		// What was read must survive a write and a re-read unchanged.
		path := filepath.Join(t.TempDir(), "l.jsonl")
		l, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if e.Time.IsZero() {
				continue // Append stamps zero times, so they would not round-trip
			}
			if err := l.Append(e); err != nil {
				t.Fatalf("append of a read entry: %v", err)
			}
		}
		l.Close()
		if _, err := ReadFile(path); err != nil {
			t.Fatalf("re-read: %v", err)
		}
		Summarize(es)
	})
}
