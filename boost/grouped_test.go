package boost_test

import (
	"bytes"
	"fmt"
	"log/slog"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/job"
)

// repeated is c with every row of the tables named repeated k times (its
// rows in order, then again): rows alike in everything boost reads.
func repeated(t *testing.T, c *joinCase, k int, names ...string) *joinCase {
	t.Helper()
	tables := map[string]*caseTable{}
	for _, ps := range c.spec.Parties {
		for _, ts := range ps.Tables {
			lines := strings.Split(strings.TrimSuffix(c.csv[ts.Name], "\n"), "\n")
			ct := &caseTable{party: ps.Name, cols: strings.Split(lines[0], ","), kinds: c.spec.Schema[ts.Name]}
			times := 1
			if slices.Contains(names, ts.Name) {
				times = k
			}
			for range times {
				for _, l := range lines[1:] {
					ct.rows = append(ct.rows, strings.Split(l, ","))
				}
			}
			tables[ts.Name] = ct
		}
	}
	return newCase(t, tables, c.spec.Join)
}

// syncBuffer is a log sink the parties' sessions share.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// plainSent is every captured message whose body is not randomised
// (combo summaries, split choices), as sender, receiver, channel and
// body, sorted, each distinct message once: what a party learns in the
// clear.
func plainSent(c *capture) []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []string
	for _, s := range c.sent {
		if s.Message.Type == boost.TypeCombos || s.Message.Type == boost.TypeSplit {
			out = append(out, fmt.Sprintf("%s>%s %s %s %x", s.From, s.To, s.Message.Type, s.Message.Channel, s.Message.Body))
		}
	}
	// A step run again (a leader change on a loaded machine) sends the
	// same messages again: each distinct message counts once.
	slices.Sort(out)
	return slices.Compact(out)
}

// TestJobGroupsAlikeRows: a star whose fact table T repeats its rows
// twelve times, trained over real nodes row by row (boost_group_rows
// false), under auto (T is read as its binned groups, the dimension
// tables, whose rows are distinct, row by row) and with every table
// grouped: the three models are the library's byte for byte (JSON), the
// combo summaries and split choices each party sent are the same bytes,
// and the grouped run keeps to the leakage profile.
func TestJobGroupsAlikeRows(t *testing.T) {
	t.Parallel()
	c := repeated(t, starCase(t, 1, 60), 12, "T")
	p := testParams()
	p.Trees = 2
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	var sents [][]string
	for _, mode := range []boost.GroupMode{boost.GroupOff, boost.GroupAuto, boost.GroupOn} {
		var logs syncBuffer
		capt := &capture{records: map[string]*job.Record{}, log: slog.New(slog.NewTextHandler(&logs, nil))}
		out := filepath.Join(t.TempDir(), "out")
		if err := simRunKind(t, c, p, boost.Kind{GroupRows: mode}, capt, out); err != nil {
			t.Fatal(err)
		}
		res := readResult(t, out)
		if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
			t.Fatalf("mode %d: the job's model differs from the library's\n got: %s\nwant: %s", mode, got, w)
		}
		grouped := regexp.MustCompile(`msg="boost: table read as binned groups" party=\w+ table=(\w+) groups=(\d+)`).FindAllStringSubmatch(logs.String(), -1)
		var names []string
		for _, m := range grouped {
			names = append(names, m[1])
		}
		slices.Sort(names)
		wantNames := map[boost.GroupMode]string{boost.GroupOff: "[]", boost.GroupAuto: "[T]", boost.GroupOn: "[A B T]"}[mode]
		if fmt.Sprint(names) != wantNames {
			t.Fatalf("mode %d: tables grouped %v, want %s\n%s", mode, names, wantNames, logs.String())
		}
		for _, m := range grouped {
			if m[1] == "T" && m[2] == fmt.Sprint(c.data["T"].NumRows()) {
				t.Fatalf("mode %d: T's %s groups are its rows", mode, m[2])
			}
		}
		sents = append(sents, plainSent(capt))
		if mode == boost.GroupOn {
			checkLeakage(t, c, want, res, out, capt, false)
		}
	}
	if len(sents[0]) == 0 || !slices.Equal(sents[0], sents[1]) || !slices.Equal(sents[0], sents[2]) {
		t.Fatalf("the plaintext messages differ between the loads: %d, %d, %d", len(sents[0]), len(sents[1]), len(sents[2]))
	}
}

// TestJobChainGroupedLeakage: the chain, its many-to-many middle table U
// and the class table repeated five times, every table grouped, the model
// released and the OT-extension PSI forced, as TestJobChain runs it: the
// model is the library's and every message and log record keeps to the
// leakage profile.
func TestJobChainGroupedLeakage(t *testing.T) {
	t.Parallel()
	c := repeated(t, chainCase(t, 1, 60), 5, "C", "U")
	p := testParams()
	p.Trees, p.Release, p.PSI = 2, true, "ot"
	want, err := boost.Train(c.g, c.data, p)
	if err != nil {
		t.Fatal(err)
	}
	capt := &capture{records: map[string]*job.Record{}}
	out := filepath.Join(t.TempDir(), "out")
	if err := simRunKind(t, c, p, boost.Kind{GroupRows: boost.GroupOn}, capt, out); err != nil {
		t.Fatal(err)
	}
	res := readResult(t, out)
	if got, w := modelOf(t, res), modelJSON(t, *want); got != w {
		t.Fatalf("the grouped job's model differs from the library's\n got: %s\nwant: %s", got, w)
	}
	checkLeakage(t, c, want, res, out, capt, true)
}
