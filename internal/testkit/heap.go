package testkit

import (
	"runtime"
	"sync"
	"time"
)

// HeapPeak samples the live heap every 5 ms until the returned function
// is called, which returns the largest sample: the figure tests' peak
// memory of one step in process (table's source reads, sjc-predict).
func HeapPeak() func() uint64 {
	var mu sync.Mutex
	var max uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		var ms runtime.MemStats
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			runtime.ReadMemStats(&ms)
			mu.Lock()
			if ms.HeapAlloc > max {
				max = ms.HeapAlloc
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return func() uint64 {
		close(stop)
		<-done
		mu.Lock()
		defer mu.Unlock()
		return max
	}
}
