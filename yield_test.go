package meshmpi

import (
	"sync"
	"testing"
)

// Yield from several goroutines at once returns in each, and lets a
// goroutine that was only runnable run.
func TestYield(t *testing.T) {
	done := make(chan struct{})
	go func() { close(done) }()
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				Yield()
			}
		}()
	}
	wg.Wait()
	<-done
}
