package table

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkOpenDistinctAllDistinct loads 1,000,000 rows that are all
// distinct over the columns asked (sjc's worst case), as OpenDistinct and
// as Open, reporting the live heap after each (live-MB).
func BenchmarkOpenDistinctAllDistinct(b *testing.B) {
	path := filepath.Join(b.TempDir(), "f.csv")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "d1,d2,m,class")
	for i := range 1000000 {
		fmt.Fprintf(w, "k%d,k%d,%d,%v\n", i%1000, i/1000%1000, i/1000000, i%7 == 0)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	schema := map[string]Kind{"d1": Key, "d2": Key, "m": Numeric, "class": Class}
	cols := []string{"class", "d1", "d2", "m"}
	live := func() float64 {
		var ms runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&ms)
		return float64(ms.HeapAlloc) / (1 << 20)
	}
	base := live()
	b.Run("distinct", func(b *testing.B) {
		for b.Loop() {
			d, err := OpenDistinct(context.Background(), Source{Path: path}, "f", schema, cols, ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(live()-base, "live-MB")
			runtime.KeepAlive(d)
		}
	})
	b.Run("open", func(b *testing.B) {
		for b.Loop() {
			t, err := Open(context.Background(), Source{Path: path}, "f", schema, ReadOptions{})
			if err != nil {
				b.Fatal(err)
			}
			b.ReportMetric(live()-base, "live-MB")
			runtime.KeepAlive(t)
		}
	})
}
