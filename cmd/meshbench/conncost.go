package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"

	"github.com/meshmpi/meshmpi"
)

// runConnCost prints what a peer connection costs in goroutines, heap and
// resident memory: for each k, rank 0 of a fresh k-rank job exchanges one
// message with every other rank, so it opens k-1 links, and the figures
// are the process's growth over that exchange divided by k-1.
func runConnCost(out io.Writer, jobs *jobServer, ranks []int) error {
	fmt.Fprintln(out, "# meshmpi cost per peer connection (webrtc links, loopback, one process)")
	fmt.Fprintln(out, "# rank 0 of a k-rank job exchanges 8 B with each other rank, opening k-1 connections; growth of the")
	fmt.Fprintln(out, "# process over the exchange (goroutines, HeapInuse after GC, VmRSS; -1: unknown) per connection.")
	fmt.Fprintln(out, "# Both ends of every connection live in this process: each figure covers two ends (one end: half).")
	fmt.Fprintf(out, "%-7s%7s%11s%15s%14s\n", "# Ranks", "Conns", "Gor/conn", "Heap-KiB/conn", "RSS-KiB/conn")
	// a warm-up job first, unprinted: the first connection of a process
	// pays one-time costs (package state, pools, the runtime's own growth)
	if err := connCost(io.Discard, jobs, 2); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	for _, k := range ranks {
		if err := connCost(out, jobs, k); err != nil {
			return fmt.Errorf("%d ranks: %w", k, err)
		}
	}
	return nil
}

func connCost(out io.Writer, jobs *jobServer, k int) error {
	spec, err := jobs.spec(k)
	if err != nil {
		return err
	}
	sessions, _, err := joinAll(spec, k)
	if err != nil {
		return err
	}
	before := measure()
	if err := exchange(sessions); err != nil {
		abortAll(sessions, err)
		return err
	}
	after := measure()
	conns, ends := sessions[0].Links(), 0
	for _, s := range sessions {
		ends += s.Links()
	}
	if conns != k-1 || ends != 2*conns {
		err := fmt.Errorf("rank 0 has %d links (want %d), all ranks %d ends (want %d)", conns, k-1, ends, 2*(k-1))
		abortAll(sessions, err)
		return err
	}
	rss := -1.0
	if before.rss >= 0 && after.rss >= 0 {
		rss = float64(after.rss-before.rss) / float64(conns)
	}
	fmt.Fprintf(out, "%7d%7d%11.1f%15.1f%14.1f\n", k, conns,
		float64(after.goroutines-before.goroutines)/float64(conns),
		float64(int64(after.heap)-int64(before.heap))/1024/float64(conns), rss)
	return finalizeAll(sessions)
}

// exchange has rank 0 send 8 B to every other rank in turn and receive
// them back, so it connects to each.
func exchange(sessions []*meshmpi.Session) error {
	errs := make([]error, len(sessions))
	var wg sync.WaitGroup
	for i := 1; i < len(sessions); i++ {
		wg.Go(func() {
			w, buf := sessions[i].World(), make([]byte, 8)
			_, err := meshmpi.Recv(w, buf, 0, tagData)
			if err == nil {
				err = meshmpi.Send(w, buf, 0, tagData)
			}
			errs[i] = err
		})
	}
	w, buf := sessions[0].World(), make([]byte, 8)
	for i := 1; i < len(sessions); i++ {
		err := meshmpi.Send(w, buf, i, tagData)
		if err == nil {
			_, err = meshmpi.Recv(w, buf, i, tagData)
		}
		if err != nil {
			errs[0] = fmt.Errorf("rank 0 with rank %d: %w", i, err)
			abortAll(sessions, err) // fails the others' pending calls
			break
		}
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("rank %d: %w", i, err)
		}
	}
	return nil
}

// usage is what the process holds at one moment.
type usage struct {
	goroutines int
	heap       uint64 // HeapInuse, bytes
	rss        int64  // VmRSS in KiB, -1 if unknown
}

// measure lets goroutines that are ending finish (the count is stable for
// 100 ms, or 2 s have passed), collects garbage, returns free memory to
// the OS and reads the figures.
func measure() usage {
	deadline := time.Now().Add(2 * time.Second)
	for n, stable := runtime.NumGoroutine(), 0; stable < 2 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
		if m := runtime.NumGoroutine(); m == n {
			stable++
		} else {
			n, stable = m, 0
		}
	}
	runtime.GC() // twice more below: sync.Pools (pion's packet buffers) empty over two collections
	runtime.GC()
	debug.FreeOSMemory() // a collection, and freed pages back to the OS: RSS is what is in use
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return usage{goroutines: runtime.NumGoroutine(), heap: ms.HeapInuse, rss: vmRSS()}
}

// vmRSS returns the resident set size from /proc/self/status in KiB, or
// -1 where there is none.
func vmRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := bytes.Fields(sc.Bytes())
		if len(f) == 3 && string(f[0]) == "VmRSS:" && string(f[2]) == "kB" {
			if v, err := strconv.ParseInt(string(f[1]), 10, 64); err == nil {
				return v
			}
		}
	}
	return -1
}
