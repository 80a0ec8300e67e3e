//go:build linux

package netlab

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/testbin"
	"github.com/meshmpi/meshmpi/signaling"
)

const mixedrankPkg = "github.com/meshmpi/meshmpi/internal/ranksuite/mixedrank"

var (
	buildMixedNative = testbin.Once(gobuild.Go{}, mixedrankPkg, "mixedrank")
	buildMixedWASI   = testbin.Once(gobuild.Go{GOOS: "wasip1", GOARCH: "wasm"}, mixedrankPkg, "mixedrank-wasi.wasm")
	buildMixedJS     = testbin.Once(gobuild.Go{GOOS: "js", GOARCH: "wasm"}, mixedrankPkg, "mixedrank-js.wasm")
)

// The cross-target rank suite in one 6-rank job spread over the lab: a
// native rank on the public network, two WASI ranks (meshrun join) in one
// home behind an endpoint-independent NAT, two native ranks in a home
// behind a symmetric NAT, and a Chromium rank in a third home behind an
// endpoint-independent NAT, its run page served by signal serve on the
// public network. Every rank runs ranksuite's all-pairs point-to-point
// and collectives in three forms, and holds a link to every other.
func TestMixedJobBehindNATs(t *testing.T) {
	if testing.Short() {
		t.Skip("network namespaces and a browser in -short mode")
	}
	chromium, err := browsertest.Find()
	if err != nil {
		if os.Getenv(browsertest.EnvRequire) == "require" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	l := New(t)
	native, err := buildMixedNative()
	require.NoError(t, err)
	wasi, err := buildMixedWASI()
	require.NoError(t, err)
	js, err := buildMixedJS()
	require.NoError(t, err)
	meshrun, err := buildMeshrun()
	require.NoError(t, err)
	progs := t.TempDir() // signal serve -wasm wants DIR/NAME.wasm
	require.NoError(t, os.Symlink(js, filepath.Join(progs, "mixedrank.wasm")))

	srvHost := l.PublicHost("srv")
	srv := startServer(t, l, srvHost, "-wasm", progs)
	pub := l.PublicHost("pub")
	wasiHome := l.Home("wasi", EndpointIndependent)
	symHome := l.Home("sym", Symmetric)
	browserHome := l.Home("browser", EndpointIndependent)

	const job, size = "mixed-nat", 6
	tok, err := signaling.Mint([]byte(labSecret), signaling.Claims{Job: job, Size: size, Expires: time.Now().Add(time.Hour).Unix()})
	require.NoError(t, err)
	suite := []string{"-mode", "suite"}
	join := func(h Host, n int, target string) proc {
		return proc{host: h, launcher: true, argv: append([]string{meshrun, "join", srv.url, "--job", job, "--token", tok, "-n", fmt.Sprint(n), target}, suite...)}
	}

	// the browser rank, started first: it joins as soon as its page runs
	page := browsertest.RunURL(srv.base, "mixedrank", job, tok, -1, suite)
	result := make(chan browsertest.RunResult, 1)
	errc := make(chan error, 1)
	go func() {
		res, err := runChromium(t, l, browserHome, chromium, srv.base, page)
		result <- res
		errc <- err
	}()

	res := execProcs(t, l, []proc{join(pub, 1, native), join(wasiHome, 2, wasi), join(symHome, 2, native)})
	require.NoError(t, <-errc)
	br := <-result
	out := strings.Join(res.outputs, "\n") + "\n[browser]\n" + br.Stdout + br.Stderr
	for i := range res.errs {
		require.NoError(t, res.errs[i], "%s", out)
	}
	require.NotNil(t, br.Status, "the page did not exit: %s", out)
	require.Equal(t, 0, *br.Status, "%s", out)
	require.Equal(t, size, strings.Count(out, "ranksuite ok:"), "%s", out)
	require.Equal(t, size, strings.Count(out, fmt.Sprintf("%d direct links", size-1)), "%s", out)
	paths := srv.paths(job)
	t.Logf("server's view of the links: %q", paths)
	relayed := 0
	for _, p := range paths {
		if strings.Contains(p, "relay") {
			relayed++
		}
	}
	// every rank reports each of its links once it is up, the browser's
	// read from getStats()
	require.Len(t, paths, size*(size-1))
	require.Positive(t, relayed, "the symmetric home's links to other homes need the relay")
}

// runChromium runs page in a headless Chromium inside h's namespace and
// returns the run page's result. chromedp drives the browser over a pipe
// (its file descriptors 3 and 4), which `ip netns exec` hands on: the
// test reaches the browser without a route into the lab, and the page
// reaches the server and the other ranks through h's NAT like any rank
// there.
func runChromium(t *testing.T, l *Lab, h Host, chromium, origin, page string) (browsertest.RunResult, error) {
	wrapper := filepath.Join(t.TempDir(), "chromium-in-"+h.NS)
	script := fmt.Sprintf("#!/bin/sh\nexec ip netns exec %s %s \"$@\"\n", h.NS, chromium)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		return browsertest.RunResult{}, err
	}
	opts := append(browsertest.Options(wrapper),
		chromedp.UserDataDir(t.TempDir()),
		// host candidates as addresses, not mDNS names nobody in the lab resolves
		chromedp.Flag("disable-features", "Translate,BlinkGenPropertyTrees,WebRtcHideLocalIpsWithMdns"),
		chromedp.Flag("unsafely-treat-insecure-origin-as-secure", origin),
	)
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	tab, cancelTab := chromedp.NewContext(alloc)
	defer cancelTab()
	if _, err := chromedp.Run(tab, chromedp.Navigate(page)); err != nil {
		return browsertest.RunResult{}, fmt.Errorf("navigate: %w", err)
	}
	return browsertest.WaitRun(tab, 3*time.Minute)
}
