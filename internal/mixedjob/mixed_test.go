//go:build !js && !wasip1

package mixedjob

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/ranksuite"
)

// programs builds the rank program for both WebAssembly targets once per
// test binary.
var programs = sync.OnceValues(func() (*Programs, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	return Build(ctx, "", true, true)
})

// launcher sets up chromium ranks (when chromium is set: skipped
// without chromium unless MESHMPI_BROWSER_TESTS=require; screenshots of
// every tab when tb fails), Firefox ranks (when firefox is set: skipped
// without firefox unless MESHMPI_BROWSER_TESTS=require), WASI and native
// ranks for tb.
func launcher(tb testing.TB, chromium, firefox bool) *Launcher {
	tb.Helper()
	cfg := Config{WASI: true, Firefox: firefox}
	if firefox {
		browsertest.RequireFirefox(tb) // first: skip before building anything
	}
	if chromium {
		b := browsertest.New(tb)
		cfg.Browser, cfg.NewTab = true, b.NewTab
	}
	var err error
	cfg.Programs, err = programs()
	require.NoError(tb, err)
	l, err := New(context.Background(), cfg)
	require.NoError(tb, err)
	tb.Cleanup(func() { require.NoError(tb, l.Close()) })
	return l
}

// maxSignalsPerPair bounds what connecting one pair of ranks takes
// through the signaling server: an offer, an answer and a few ICE
// candidates each way. The suite moves thousands of frames between
// every pair, so a job whose data went through the server would pass it
// by orders of magnitude.
const maxSignalsPerPair = 40

// TestMixedJob runs one job of seven ranks, two of each kind and a
// Firefox rank, interleaved (chromium, WASI, native, Firefox, chromium,
// WASI, native) so that the ring-shaped checks cross kinds too, every
// rank running ranksuite.Suite: all-pairs point-to-point (every pair of
// kinds, small and rendezvous-sized), ordering, any-source, synchronous
// sends, a goroutine running while its rank waits, and Bcast,
// Allreduce, Reduce, Allgather, Alltoall and Barrier in their blocking,
// nonblocking and persistent forms, each checked against a sequential
// computation. Every rank then checks that it holds a direct link to
// each of the others, and the signaling server must have relayed no
// more than connecting the pairs takes. Both browsers run the one
// GOOS=js build.
//
// Without firefox the job runs without its Firefox rank and the test
// then skips, saying so (it fails when MESHMPI_BROWSER_TESTS=require).
func TestMixedJob(t *testing.T) {
	_, noFirefox := browsertest.FindFirefox()
	if os.Getenv(browsertest.EnvRequire) == "require" {
		noFirefox = nil // launcher fails the test
	}
	l := launcher(t, true, noFirefox == nil)
	kinds := []Kind{Browser, WASI, Native, Firefox, Browser, WASI, Native}
	if noFirefox != nil {
		kinds = slices.DeleteFunc(kinds, func(k Kind) bool { return k == Firefox })
	}
	ranks := make([]Rank, len(kinds))
	for i, k := range kinds {
		ranks[i] = Rank{Kind: k, Task: ranksuite.Task{Mode: ranksuite.ModeSuite}}
	}
	res, err := l.Run(context.Background(), ranks)
	require.NoError(t, err)
	for _, r := range res {
		t.Logf("%s rank %d: %v\n%s%s", r.Kind, r.Rank, r.Err, r.Stdout, r.Stderr)
		if r.Kind == Browser || r.Kind == Firefox {
			t.Logf("%s rank %d: ready %.0f ms after page load", r.Kind, r.Rank, r.Ready)
		}
	}
	n := len(kinds)
	for _, r := range res {
		require.NoError(t, r.Err, "%s rank %d", r.Kind, r.Rank)
		require.Contains(t, r.Stdout, fmt.Sprintf("ranksuite ok: rank %d of %d, %d direct links", r.Rank, n, n-1),
			"%s rank %d", r.Kind, r.Rank)
	}
	st := l.Server.Stats()
	t.Logf("signaling server: %d joins, %d signals relayed", st.Joins, st.Relayed)
	require.Equal(t, uint64(n), st.Joins)
	require.LessOrEqual(t, st.Relayed, uint64(n*(n-1)/2*maxSignalsPerPair), "signals relayed")
	if noFirefox != nil {
		t.Skipf("the job ran without its Firefox rank: %v; set %s=require to fail instead of skipping", noFirefox, browsertest.EnvRequire)
	}
}

// TestFailingRankFailsTheJob: a driver whose plan is invalid fails on its
// own, and the job reports it rather than hanging: the Echo rank sees
// the driver leave (ErrProcFailed) and ends too.
func TestFailingRankFailsTheJob(t *testing.T) {
	l := launcher(t, false, false)
	_, res, err := l.Pair(context.Background(), Native, WASI, ranksuite.Plan{LatSizes: []int{1 << 30}})
	require.Error(t, err)
	require.Len(t, res, 2)
	require.ErrorContains(t, res[0].Err, "message size")
	require.Error(t, res[1].Err, "the echo rank outlived its driver")
	require.True(t, strings.Contains(res[1].Err.Error(), "exit status 1"), "%v", res[1].Err)
}

// Abort from a browser rank ends the job: the page's program exits with
// the code, saying who aborted; the WASI rank (told through its host) and
// the native rank (a Join session in this process, which does not exit)
// end with ErrProcFailed instead of waiting: the abort, or the aborting
// rank's departure, or the other's, whichever reaches each first (the
// server's notice and the closing links race).
func TestAbortFromBrowser(t *testing.T) {
	l := launcher(t, true, false)
	task := ranksuite.Task{Mode: ranksuite.ModeAbort, Peer: 0}
	res, err := l.Run(context.Background(), []Rank{{Kind: Browser, Task: task}, {Kind: WASI, Task: task}, {Kind: Native, Task: task}})
	require.NoError(t, err)
	for _, r := range res {
		t.Logf("%s rank %d: %v\n%s%s", r.Kind, r.Rank, r.Err, r.Stdout, r.Stderr)
	}
	want := fmt.Sprintf(`rank 0 called Abort\(%d\) at task\.go:\d+`, ranksuite.AbortCode)
	require.ErrorContains(t, res[0].Err, fmt.Sprintf("exit status %d", ranksuite.AbortCode))
	require.Regexp(t, "meshmpi: "+want, res[0].Stderr)
	for _, r := range res[1:] {
		require.Error(t, r.Err, "%s rank %d", r.Kind, r.Rank)
		require.Contains(t, r.Err.Error(), meshmpi.ErrProcFailed.Error(), "%s rank %d", r.Kind, r.Rank)
	}
	require.ErrorIs(t, res[2].Err, meshmpi.ErrProcFailed)
}
