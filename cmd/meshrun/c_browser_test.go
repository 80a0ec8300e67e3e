//go:build unix

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/browsertest"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/internal/lockedbuf"
	"github.com/meshmpi/meshmpi/internal/mixedjob"
)

// cBrowserJobLimit bounds one job of TestCWASIAndBrowser: tabs load a
// 5 MB module and compile it, and a loaded 2-core machine (or -race)
// slows each rank several times over.
const cBrowserJobLimit = 4 * time.Minute

// cBrowserMaxSignalsPerPair bounds what linking one pair of ranks takes
// through the signaling server (an offer, an answer and a few ICE
// candidates each way; internal/mixedjob's bound). The job moves 800 KB
// between every pair: had its data gone through the server, it would
// pass the bound by orders of magnitude.
const cBrowserMaxSignalsPerPair = 40

// TestCWASIAndBrowser runs one job of C ranks under WASI and Go ranks in
// headless chromium tabs, every pair linked directly over WebRTC (the
// job's link=webrtc: the C ranks' hosts too, which would otherwise link
// to each other through shared memory). The C ranks are
// abi/testdata/browsermixed.c, each in a process of meshrun's
// cRankCommand as meshrun starts them (wazero, the C binding serving the
// guest's calls from a meshmpi rank native in the process, which links
// to the tabs over data channels); the tabs run abi/testdata/browserrank
// (GOOS=js) on the run page, served with the signaling endpoint on one
// loopback port (internal/mixedjob's server, as cmd/signal serves them). Every rank makes the same
// calls: messages to and from every other rank (eager and
// rendezvous-sized), a Sendrecv ring, Allreduce, Bcast rooted on a C
// rank, Reduce rooted on the last rank, Allgather, Barrier, and checks
// their results; a tab then checks that its link to each other rank is
// a direct WebRTC link. No rank's link may have been reported relayed
// or same-host to the server, and the server must have relayed no more
// than linking the pairs takes.
func TestCWASIAndBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("builds, a browser and a WebRTC job in -short mode")
	}
	needWASIClang(t)
	browsertest.Require(t)
	for _, tc := range []struct {
		name  string
		kinds string // a rank per letter: c a C WASI rank, b a browser tab
	}{
		{"two of each", "cbcb"},
		{"one C rank, the rest tabs", "bbc"},
	} {
		t.Run(tc.name, func(t *testing.T) { runCBrowserJob(t, tc.kinds) })
	}
}

// cBrowserRank is how one rank of a TestCWASIAndBrowser job ended.
type cBrowserRank struct {
	kind           byte // 'c' or 'b'
	err            error
	stdout, stderr string
}

// runCBrowserJob runs one job whose rank r is a C WASI rank when
// kinds[r] is 'c' and a chromium tab when it is 'b', and checks it.
func runCBrowserJob(t *testing.T, kinds string) {
	meshrun, meshcc := cTools(t)
	wasm := filepath.Join(t.TempDir(), "browsermixed.wasm")
	if out, err := exec.Command(meshcc, "--target", "wasm32-wasi", "-Wall", "-Werror", "-O2", "-I../../abi/testdata",
		"-o", wasm, "../../abi/testdata/browsermixed.c").CombinedOutput(); err != nil {
		t.Fatalf("meshcc: %v\n%s", err, out)
	}
	page, err := browserRankPage()
	require.NoError(t, err)
	srv, err := mixedjob.StartServer(&mixedjob.Programs{JS: page.module, WasmExec: page.wasmExec})
	require.NoError(t, err)
	t.Cleanup(func() { _ = srv.Close() })
	srv.Settings = map[string]string{meshmpi.SettingLink: "webrtc"}
	b := browsertest.New(t)

	n := len(kinds)
	job, token, err := srv.NewJob(n)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), cBrowserJobLimit)
	defer cancel()

	res := make([]cBrowserRank, n)
	var wg sync.WaitGroup
	start := time.Now()
	for r := range n {
		res[r].kind = kinds[r]
		switch kinds[r] {
		case 'c':
			var stdout, stderr lockedbuf.Buffer
			cmd := exec.CommandContext(ctx, meshrun, cRankCommand, wasm)
			cmd.Env = append(os.Environ(), meshmpi.EnvSignal+"="+srv.WS, meshmpi.EnvJob+"="+job,
				meshmpi.EnvToken+"="+token, meshmpi.EnvRank+"="+fmt.Sprint(r))
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			require.NoError(t, cmd.Start())
			wg.Go(func() {
				res[r].err = cmd.Wait()
				res[r].stdout, res[r].stderr = stdout.String(), stderr.String()
			})
		case 'b':
			tab, err := b.NewTab(fmt.Sprintf("rank %d", r), srv.URL)
			require.NoError(t, err)
			url := browsertest.RunURL(srv.URL, mixedjob.ProgramName, job, token, r, nil)
			wg.Go(func() {
				wait, stop := context.WithCancel(tab) // the tab itself lives on for the screenshots
				defer stop()
				defer context.AfterFunc(ctx, stop)()
				if err := chromedp.Do(wait, chromedp.Navigate(url)); err != nil {
					res[r].err = fmt.Errorf("open the run page: %w", err)
					return
				}
				deadline, _ := ctx.Deadline()
				p, err := browsertest.WaitRun(wait, time.Until(deadline))
				res[r].stdout, res[r].stderr = p.Stdout, p.Stderr
				switch {
				case err != nil:
					res[r].err = err
				case p.Status == nil:
					res[r].err = fmt.Errorf("the run page exited without a status (error %v)", p.Error)
				case *p.Status != 0:
					res[r].err = fmt.Errorf("exit status %d", *p.Status)
				}
			})
		default:
			t.Fatalf("rank %d: kind %q: want c or b", r, kinds[r])
		}
	}
	wg.Wait()
	t.Logf("job %s: %d ranks ended in %v", kinds, n, time.Since(start).Round(time.Millisecond))

	for r, x := range res {
		lang := map[byte]string{'c': "C", 'b': "Go"}[x.kind]
		want := fmt.Sprintf("mixed ok: %s rank %d of %d", lang, r, n)
		if x.kind == 'b' {
			want += fmt.Sprintf(", %d direct WebRTC links", n-1)
		}
		t.Logf("rank %d (%s): %v\nstdout:\n%sstderr:\n%s", r, lang, x.err, x.stdout, x.stderr)
		if x.err != nil || !strings.Contains(x.stdout, want) {
			t.Errorf("rank %d (%s): %v; want %q in its output", r, lang, x.err, want)
		}
	}
	st := srv.Stats()
	t.Logf("signaling server: %d joins, %d signals relayed, link paths %v", st.Joins, st.Relayed, st.Paths)
	require.Equal(t, uint64(n), st.Joins)
	require.LessOrEqual(t, st.Relayed, uint64(n*(n-1)/2*cBrowserMaxSignalsPerPair), "signals relayed")
	// the reports are best effort (a rank sends its own as its link
	// opens): that none says relayed or same-host is what can be asked
	for kind, count := range st.Paths {
		if kind != "direct" {
			require.Zero(t, count, "links reported %s", kind)
		}
	}
}

// cBrowserPage is the tab's program and the wasm_exec.js of the
// toolchain that built it.
type cBrowserPage struct{ module, wasmExec []byte }

// browserRankPage builds abi/testdata/browserrank for GOOS=js once per
// test binary.
var browserRankPage = sync.OnceValues(func() (cBrowserPage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	g := gobuild.Go{GOOS: "js", GOARCH: "wasm"}
	dir, err := os.MkdirTemp("", "meshrun-browserrank-")
	if err != nil {
		return cBrowserPage{}, err
	}
	defer os.RemoveAll(dir)
	out := filepath.Join(dir, "browserrank.wasm")
	if err := g.Build(ctx, out, "../../abi/testdata/browserrank", "-trimpath", "-ldflags=-s -w"); err != nil {
		return cBrowserPage{}, err
	}
	var p cBrowserPage
	if p.module, err = os.ReadFile(out); err != nil {
		return p, err
	}
	goroot, err := g.Output(ctx, "env", "GOROOT")
	if err != nil {
		return p, err
	}
	p.wasmExec, err = os.ReadFile(filepath.Join(goroot, "lib", "wasm", "wasm_exec.js"))
	return p, err
})
