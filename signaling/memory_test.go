//go:build !js && !wasip1

package signaling

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Environment of the child process that holds the clients of
// TestJoinedConnMemory.
const (
	envMemURL    = "MESHMPI_SIGNALING_MEM_URL"    // the server's ws:// URL
	envMemTokens = "MESHMPI_SIGNALING_MEM_TOKENS" // file of "job rank token" lines
)

const (
	memJobs    = 20
	memJobSize = 100      // memJobs*memJobSize joined connections
	memBudget  = 20 << 10 // issue 21's bar is 30 KB; 12.6 KB measured
)

// What a joined rank costs the server: 2,000 ranks in 20 formed jobs,
// held by a child process so that only the server's side is measured
// (the bar of issue 21: at most 30 KB each; held to 20 KB, 12.6 KB
// measured, to keep the gain).
func TestJoinedConnMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("2,000 websockets in -short mode")
	}
	if raceEnabled {
		t.Skip("the race detector pads allocations (and is slow with 2,000 websockets): the bar holds without it")
	}
	srv, url := startServer(t, func(c *Config) { c.MaxJobSize = memJobSize })
	var lines []string
	for j := range memJobs {
		job := "mem-" + strconv.Itoa(j)
		for r, tok := range seats(t, job, memJobSize) {
			lines = append(lines, fmt.Sprintf("%s %d %s", job, r, tok))
		}
	}
	file := t.TempDir() + "/tokens"
	require.NoError(t, os.WriteFile(file, []byte(strings.Join(lines, "\n")), 0o600))

	before := serverMem()
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemClients$", "-test.v")
	cmd.Env = append(os.Environ(), envMemURL+"="+url, envMemTokens+"="+file)
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		_ = stdin.Close()
		require.NoError(t, cmd.Wait())
	})
	sc := bufio.NewScanner(stdout)
	ready := false
	for !ready && sc.Scan() {
		ready = sc.Text() == "all joined"
	}
	require.True(t, ready, "the clients did not all join: %v", sc.Err())
	go func() {
		for sc.Scan() {
		}
	}()
	st := srv.Stats()
	require.Equal(t, memJobs*memJobSize, st.Ranks)
	after := serverMem()
	n := uint64(memJobs * memJobSize)
	perHeap := (after.heap - before.heap) / n
	perStack := (after.stack - before.stack) / n
	t.Logf("%d joined websockets: %d B heap + %d B stack = %d B each on the server (%d goroutines each); RSS +%d B each",
		n, perHeap, perStack, perHeap+perStack, (after.goroutines-before.goroutines)/int(n), (after.rss-before.rss)/n)
	require.LessOrEqual(t, perHeap+perStack, uint64(memBudget))
	// one reader each, and a writer or a pong wait for some of them at
	// any moment
	require.LessOrEqual(t, after.goroutines-before.goroutines, 2*int(n), "goroutines per connection")
}

type memFigures struct {
	heap, stack, rss uint64
	goroutines       int
}

func serverMem() memFigures {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	f := memFigures{heap: ms.HeapInuse, stack: ms.StackInuse, goroutines: runtime.NumGoroutine()}
	if b, err := os.ReadFile("/proc/self/statm"); err == nil {
		if fs := strings.Fields(string(b)); len(fs) > 1 {
			pages, _ := strconv.ParseUint(fs[1], 10, 64)
			f.rss = pages * uint64(os.Getpagesize())
		}
	}
	return f
}

// TestMemClients is TestJoinedConnMemory's child: it joins every seat of
// the token file, says "all joined" once every job is ready, and holds the
// connections until its stdin closes.
func TestMemClients(t *testing.T) {
	url := os.Getenv(envMemURL)
	if url == "" {
		t.Skip("the child of TestJoinedConnMemory")
	}
	data, err := os.ReadFile(os.Getenv(envMemTokens))
	require.NoError(t, err)
	lines := strings.Split(string(data), "\n")
	clients := make([]*Client, len(lines))
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // hang guard
	defer cancel()
	errs := make([]error, len(lines))
	sem := make(chan struct{}, 64)
	var dials sync.WaitGroup
	for i, l := range lines {
		dials.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; dials.Done() }()
			f := strings.Fields(l)
			clients[i], errs[i] = Dial(ctx, url, f[0], f[2], nil)
		}()
	}
	dials.Wait()
	for _, err := range errs {
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for m := range c.Messages() {
				if _, ok := m.(*Ready); ok {
					return
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("all joined")
	_, _ = bufio.NewReader(os.Stdin).ReadString('\n') // until EOF
	for _, c := range clients {
		_ = c.Close()
	}
}
