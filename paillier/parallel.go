package paillier

import (
	"runtime"
	"sync"
)

// parallel runs f(0..n-1) on GOMAXPROCS goroutines. A panic in a worker
// is re-raised in the calling goroutine after all workers stop, so that a
// caller can recover from it as from a panic in its own code (inputs are
// validated before they reach parallel, so such a panic is an internal
// error).
func parallel(n int, f func(i int)) {
	workers := runtime.GOMAXPROCS(0)
	if workers > n {
		workers = n
	}
	if workers <= 1 {
		for i := 0; i < n; i++ {
			f(i)
		}
		return
	}
	var (
		wg        sync.WaitGroup
		panicOnce sync.Once
		panicVal  any
		panicked  bool
	)
	next := make(chan int, n)
	for i := 0; i < n; i++ {
		next <- i
	}
	close(next)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				if r := recover(); r != nil {
					panicOnce.Do(func() { panicVal, panicked = r, true })
				}
			}()
			for i := range next {
				f(i)
			}
		}()
	}
	wg.Wait()
	if panicked {
		panic(panicVal)
	}
}
