//go:build unix || windows

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshmpi/meshmpi"
	"github.com/meshmpi/meshmpi/internal/gobuild"
	"github.com/meshmpi/meshmpi/signaling"
	"github.com/meshmpi/meshmpi/web"
)

// joinInfo is what --join-info writes: how a late rank joins meshrun's
// job that grows (--max).
type joinInfo struct {
	// Join is the job's join URL, ws://127.0.0.1:PORT/ws?job=ID&token=T,
	// for meshrun join (or a program's MESHMPI_SIGNAL, MESHMPI_JOB and
	// MESHMPI_TOKEN, which it holds).
	Join string `json:"join"`
	// Browser is the run page that joins the job as a browser rank,
	// http://127.0.0.1:PORT/run?…; "" when meshrun has none (the
	// target is not a package, or it does not build for GOOS=js).
	Browser string `json:"browser,omitempty"`
}

// growable tells how late ranks join the job meshrun grows (--max): on
// stderr, before any rank starts, the meshrun join command line and the
// browser link, and in --join-info's file.
func (l *launcher) growable(spec meshmpi.JobSpec) error {
	info := joinInfo{Join: joinURL(spec.Signal, spec.Job, l.late)}
	if l.web != nil {
		info.Browser = l.web.runURL(spec.Job, l.late, l.page.name, l.cfg.args)
	}
	cmd := append([]string{"meshrun", "join", "'" + info.Join + "'"}, shellQuote(l.cfg.target))
	for _, a := range l.cfg.args {
		cmd = append(cmd, shellQuote(a))
	}
	if l.cfg.joinInfo != "" { // first: whoever reads the lines finds the file
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // the URLs' & as is, for scripts
		if err := enc.Encode(info); err != nil {
			return err
		}
		if err := writeFileAtomic(l.cfg.joinInfo, b.Bytes()); err != nil {
			return err
		}
	}
	// one write: a reader of the first line finds the second too
	lines := "meshrun: join this job: " + strings.Join(cmd, " ") + "\n"
	if info.Browser != "" {
		lines += "meshrun: browser join link: " + info.Browser + "\n"
	}
	_, err := io.WriteString(l.stderr, lines)
	return err
}

// writeFileAtomic writes b to path through a temporary file beside it
// and a rename, so that a reader waiting for path never reads half of it.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+"-")
	if err != nil {
		return fmt.Errorf("--join-info: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("--join-info: %w", err)
	}
	return nil
}

// shellQuote quotes s for a POSIX shell, unless it needs none.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// browserProgram is the target package built for GOOS=js GOARCH=wasm,
// which the run page runs, with the wasm_exec.js of the toolchain that
// built it.
type browserProgram struct {
	name     string // the run page's example=
	wasm     []byte
	wasmExec []byte
}

// buildBrowser builds t's package for the browser's run page, for
// meshrun --max's browser join link. A package that does not build for
// GOOS=js gets no link, and the job runs without: meshrun says why. It
// gives up at a signal, with meshrun's exit status.
func (l *launcher) buildBrowser(t target, dir string) (status int, ok bool) {
	start := time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		p   *browserProgram
		err error
	}
	done := make(chan result, 1)
	go func() {
		p, err := goBuildJS(ctx, t, dir)
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			l.fail("no browser join link: %v", r.err)
			return 0, true
		}
		l.page = r.p
		l.log.Info("built for the browser", "package", t.pkg, "bytes", len(r.p.wasm), "took", time.Since(start).Round(time.Millisecond))
		return 0, true
	case sig := <-l.sigc:
		cancel()
		<-done // bounded by goBuild's WaitDelay
		return signalStatus(sig), false
	}
}

// goBuildJS builds t's package for GOOS=js GOARCH=wasm into dir and reads
// the result and its toolchain's wasm_exec.js.
func goBuildJS(ctx context.Context, t target, dir string) (*browserProgram, error) {
	g := gobuild.Go{Dir: t.dir, GOOS: "js", GOARCH: "wasm", Setup: interruptGroup}
	name := pageName(t.name)
	out := filepath.Join(dir, name+"-js.wasm")
	if err := g.Build(ctx, out, t.pkg); err != nil {
		if t.dir != "" {
			return nil, fmt.Errorf("in %s: %w", t.dir, err)
		}
		return nil, err
	}
	goroot, err := g.Output(ctx, "env", "GOROOT")
	if err != nil {
		return nil, err
	}
	var support []byte
	for _, p := range []string{"lib/wasm/wasm_exec.js", "misc/wasm/wasm_exec.js"} { // Go 1.24 moved it
		if support, err = os.ReadFile(filepath.Join(goroot, filepath.FromSlash(p))); err == nil {
			break
		}
	}
	if err != nil {
		return nil, fmt.Errorf("the toolchain's wasm_exec.js: %w", err)
	}
	wasm, err := os.ReadFile(out)
	if err != nil {
		return nil, err
	}
	return &browserProgram{name: name, wasm: wasm, wasmExec: support}, nil
}

// pageName is a program's name as the run page takes it (example=):
// letters, digits, - and _.
func pageName(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			b[i] = '_'
		}
	}
	if len(b) == 0 || s == "." {
		return "rank"
	}
	return string(b)
}

// webServer serves the browser's run page (package web) for meshrun's
// job that grows, with the embedded signaling server's /ws beside it, as
// signal serve does, on a loopback port of its own: a page joins the
// server that served it.
type webServer struct {
	url    string // http://127.0.0.1:PORT
	hs     *http.Server
	served chan error
}

// serveRunPage starts a webServer for srv's jobs that runs p.
func serveRunPage(srv *signaling.Local, p *browserProgram) (*webServer, error) {
	ui, err := web.Handler(web.Options{WasmExec: p.wasmExec, Programs: map[string][]byte{p.name: p.wasm}})
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/", ui)
	mux.Handle("/ws", srv.Server)
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("the run page's listener: %w", err)
	}
	w := &webServer{url: "http://" + ln.Addr().String(), hs: signaling.NewHTTPServer(mux, 0), served: make(chan error, 1)}
	go func() { w.served <- w.hs.Serve(ln) }()
	return w, nil
}

// runURL is the run page that joins job with token as a rank running
// program with args. mic=1 has the page hold the microphone, so that the
// browser offers its plain loopback address to the job's ranks (a
// loopback job's) instead of an mDNS name.
func (w *webServer) runURL(job, token, program string, args []string) string {
	v := url.Values{"job": {job}, "token": {token}, "example": {program}, "mic": {"1"}}
	if len(args) > 0 {
		v["arg"] = args
	}
	return w.url + "/run?" + v.Encode()
}

// Close stops the page's server; connections it handed to the signaling
// server are that server's to close.
func (w *webServer) Close() error {
	err := w.hs.Close()
	if serr := <-w.served; !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	return err
}
