package boost_test

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cohortdm/cohort/boost"
	"github.com/cohortdm/cohort/joinprop"
	"github.com/cohortdm/cohort/table"
)

// scaleSchemas are scaleData's tables' columns: guest (the class
// holder: id, y and 13 numeric columns) and host (id and 10 numeric
// columns).
func scaleSchemas() map[string]map[string]table.Kind {
	schemas := map[string]map[string]table.Kind{}
	for side, k := range map[string]int{"guest": 13, "host": 10} {
		schemas[side] = map[string]table.Kind{"id": table.Key}
		if side == "guest" {
			schemas[side]["y"] = table.Class
		}
		for j := range k {
			schemas[side][fmt.Sprintf("%s%d", side[:1], j)] = table.Numeric
		}
	}
	return schemas
}

// writeScale writes scaleData's n rows as CSV to guest and host, from a
// fixed seed: y depends on a few columns of both sides.
func writeScale(guest, host io.Writer, n int) error {
	rng := rand.New(rand.NewPCG(uint64(n), 34))
	w := map[string]*bufio.Writer{"guest": bufio.NewWriter(guest), "host": bufio.NewWriter(host)}
	w["guest"].WriteString("id,y")
	w["host"].WriteString("id")
	for j := range 23 {
		if j < 13 {
			fmt.Fprintf(w["guest"], ",g%d", j)
		} else {
			fmt.Fprintf(w["host"], ",h%d", j-13)
		}
	}
	w["guest"].WriteString("\n")
	w["host"].WriteString("\n")
	x := make([]float64, 23)
	for i := range n {
		for j := range x {
			x[j] = float64(rng.IntN(1000)) / 10
		}
		y := 0
		if x[0]+x[13]-x[1]/2+rng.NormFloat64()*20 > 60 {
			y = 1
		}
		fmt.Fprintf(w["guest"], "%d,%d", i, y)
		fmt.Fprintf(w["host"], "%d", i)
		for j, v := range x {
			side := "guest"
			if j >= 13 {
				side = "host"
			}
			w[side].WriteString("," + strconv.FormatFloat(v, 'f', 1, 64))
		}
		w["guest"].WriteString("\n")
		w["host"].WriteString("\n")
	}
	return errors.Join(w["guest"].Flush(), w["host"].Flush())
}

// scaleData is a two-party one-to-one join of n rows shaped like
// default_credit (writeScale), joined by id, read into tables.
func scaleData(t *testing.T, n int) (*joinprop.Graph, map[string]*table.Table) {
	schemas := scaleSchemas()
	var b = map[string]*strings.Builder{"guest": {}, "host": {}}
	if err := writeScale(b["guest"], b["host"], n); err != nil {
		t.Fatal(err)
	}
	data := map[string]*table.Table{}
	for side := range b {
		var err error
		if data[side], err = table.Read(strings.NewReader(b[side].String()), side+".csv", side, schemas[side]); err != nil {
			t.Fatal(err)
		}
		b[side] = nil
	}
	g, err := joinprop.BuildGraph(map[string]string{"guest": "guest", "host": "host"}, schemas, []string{"guest.id = host.id"})
	if err != nil {
		t.Fatal(err)
	}
	return g, data
}

// heap is the live heap after a collection.
func heap() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestScale logs the time per tree and the memory of boost on
// BOOST_SCALE join rows (scaleData), BOOST_TREES trees (1) of depth
// BOOST_DEPTH (3), 32 bins, both parties in one process with the sums in
// the clear (docs/boost.md): the live heap of the tables, the peak heap
// while training, and the process's peak resident set.
func TestScale(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("BOOST_SCALE"))
	if n < 1 {
		t.Skip("BOOST_SCALE=ROWS to measure")
	}
	p := boost.DefaultParams()
	p.Trees = 1
	if v, err := strconv.Atoi(os.Getenv("BOOST_TREES")); err == nil {
		p.Trees = v
	}
	if v, err := strconv.Atoi(os.Getenv("BOOST_DEPTH")); err == nil {
		p.MaxDepth = v
	}
	h0 := heap()
	g, data := scaleData(t, n)
	tables := heap() - h0
	var peak uint64
	done := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			peak = max(peak, m.HeapAlloc)
			select {
			case <-done:
				return
			case <-tick.C:
			}
		}
	}()
	cpu0, t0 := cpuTime(t), time.Now()
	_, err := boost.Train(g, data, p)
	wall, cpu := time.Since(t0)/time.Duration(p.Trees), (cpuTime(t)-cpu0)/time.Duration(p.Trees)
	close(done)
	<-sampled
	if err != nil {
		t.Fatal(err)
	}
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	t.Logf("%d join rows, 2 parties (13 + 10 numeric columns), %d trees of depth %d, %d bins, sums in the clear, one process: %v per tree, CPU %v per tree; tables %d MB live, heap peak %d MB (sampled every 100 ms), peak resident set %d MB",
		n, p.Trees, p.MaxDepth, p.Bins, wall.Round(time.Millisecond), cpu.Round(time.Millisecond), tables>>20, peak>>20, ru.Maxrss>>10)
	runtime.KeepAlive(data)
}
