//go:build linux

// Command jsrun runs a GOOS=js GOARCH=wasm program, typically a test
// binary, in headless Chromium, so that
//
//	GOOS=js GOARCH=wasm go test -exec="$(go env GOPATH)/bin/jsrun" ./op ./coll .
//
// runs a package's ordinary test functions in a real browser page, with the
// page's RTCPeerConnection, WebSocket and MessageChannel (Node, Go's
// default go_js_wasm_exec, has none of the first). Install it with
// `go install ./cmd/jsrun`, or name it as -exec="go run ./cmd/jsrun".
//
//	jsrun [-timeout D] program.wasm [args...]
//
// jsrun serves the program and the Go toolchain's wasm_exec.js on a
// loopback port, opens a page that runs the program with args, streams its
// standard output and error to jsrun's own, and exits with the program's
// exit status. The program's environment is the part of jsrun's that fits
// a wasm program's 8 KB limit for arguments and environment: MESHMPI_*,
// GO* and a few common variables. The program sees jsrun's file system
// and working directory (as under Node): the page forwards each file
// call to jsrun over its loopback port, under a random key. Subprocesses
// and listening sockets do not exist in a page, so tests that need them
// must skip themselves under GOOS=js.
//
// wasm_exec.js must come from the toolchain that built the program: jsrun
// takes it from $GOROOT, else `go env GOROOT`, else the toolchain jsrun was
// built with. It needs chromium (see internal/browsertest).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/meshmpi/meshmpi/internal/browsertest"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "jsrun:", err)
		if code == 0 {
			code = 2
		}
	}
	os.Exit(code)
}

// maxEnv is what wasm_exec.js leaves for argv and the environment
// together (8 KB of the wasm memory below the program's data).
const maxEnv = 7 << 10

func run(args []string, stdout, stderr io.Writer) (int, error) {
	fs := flag.NewFlagSet("jsrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	timeout := fs.Duration("timeout", 0, "give up after this long (default: the program's -test.timeout plus a minute, else 20m)")
	if err := fs.Parse(args); err != nil {
		return 2, err
	}
	if fs.NArg() < 1 {
		return 2, errors.New("usage: jsrun [-timeout D] program.wasm [args...]")
	}
	prog, pargs := fs.Arg(0), fs.Args()[1:]
	if *timeout == 0 {
		*timeout = 20 * time.Minute
		for _, a := range pargs {
			if v, ok := strings.CutPrefix(a, "-test.timeout="); ok {
				if d, err := time.ParseDuration(v); err == nil && d > 0 {
					*timeout = d + time.Minute
				}
			}
		}
	}
	wasmExec, err := os.ReadFile(filepath.Join(goroot(), "lib", "wasm", "wasm_exec.js"))
	if err != nil {
		return 2, fmt.Errorf("wasm_exec.js: %w", err)
	}
	fsrv, err := newFSServer()
	if err != nil {
		return 2, err
	}
	argv, env := append([]string{filepath.Base(prog)}, pargs...), environ()
	if n := envSize(argv, env); n > maxEnv {
		return 2, fmt.Errorf("arguments and environment take %d bytes, more than a wasm program's %d", n, maxEnv)
	}
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	fsKey := hex.EncodeToString(key)
	setup, err := json.Marshal(map[string]any{"argv": argv, "env": env, "cwd": fsrv.cwd, "fsKey": fsKey})
	if err != nil {
		return 2, err
	}

	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return 2, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, page)
	})
	mux.HandleFunc("GET /wasm_exec.js", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/javascript")
		_, _ = w.Write(wasmExec)
	})
	mux.HandleFunc("GET /setup.json", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(setup)
	})
	mux.Handle("POST /fs/"+fsKey, fsrv)
	mux.HandleFunc("GET /program.wasm", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/wasm")
		http.ServeFile(w, r, prog)
	})
	// Idle keep-alive connections and slow requests are cut; no write
	// timeout, which would also bound how long a handler may take.
	hs := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ReadTimeout: time.Minute, IdleTimeout: time.Minute}
	go func() { _ = hs.Serve(ln) }()
	defer hs.Close()
	origin := "http://" + ln.Addr().String()

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()
	bctx, stop, err := browsertest.Launch(ctx)
	if err != nil {
		return 2, err
	}
	defer stop()
	if err := browsertest.GrantMedia(bctx, origin); err != nil {
		return 2, err
	}
	for _, name := range []string{"jsrunWrite", "jsrunExit"} {
		if _, err := chromedp.Call(bctx, cdpruntime.AddBinding, cdpruntime.AddBindingParams{Name: name}); err != nil {
			return 2, fmt.Errorf("binding %s: %w", name, err)
		}
	}
	calls := chromedp.Events(bctx, cdpruntime.BindingCalled)
	if err := chromedp.Do(bctx, chromedp.Navigate(origin+"/")); err != nil {
		return 2, err
	}
	for ev, err := range calls {
		if err != nil {
			return 2, fmt.Errorf("the page ended before the program exited: %w", err)
		}
		switch ev.Name {
		case "jsrunWrite":
			var w struct {
				FD   int    `json:"fd"`
				Text string `json:"text"`
			}
			if err := json.Unmarshal([]byte(ev.Payload), &w); err != nil {
				return 2, err
			}
			out := stdout
			if w.FD == 2 {
				out = stderr
			}
			_, _ = io.WriteString(out, w.Text)
		case "jsrunExit":
			var e struct {
				Code  int    `json:"code"`
				Error string `json:"error"`
			}
			if err := json.Unmarshal([]byte(ev.Payload), &e); err != nil {
				return 2, err
			}
			if e.Error != "" {
				return 2, errors.New(e.Error)
			}
			return e.Code, nil
		}
	}
	return 2, errors.New("the page ended before the program exited")
}

// goroot is the toolchain whose wasm_exec.js matches the program.
func goroot() string {
	if g := os.Getenv("GOROOT"); g != "" {
		return g
	}
	if out, err := exec.Command("go", "env", "GOROOT").Output(); err == nil {
		if g := strings.TrimSpace(string(out)); g != "" {
			return g
		}
	}
	return runtime.GOROOT()
}

// envSize is what argv and env take in the wasm program's memory.
func envSize(argv []string, env map[string]string) int {
	n := 0
	for _, a := range argv {
		n += len(a) + 1 + 8 + 7 // string, NUL, pointer, alignment
	}
	for k, v := range env {
		n += len(k) + len(v) + 2 + 8 + 7
	}
	return n
}

// environ is the part of the environment passed on to the program.
func environ() map[string]string {
	keep := map[string]bool{"HOME": true, "USER": true, "TMPDIR": true, "TZ": true, "CI": true}
	env := map[string]string{}
	for _, kv := range os.Environ() {
		k, v, _ := strings.Cut(kv, "=")
		if keep[k] || strings.HasPrefix(k, "MESHMPI_") || (strings.HasPrefix(k, "GO") && k != "GOFLAGS" && k != "GOPATH") {
			env[k] = v
		}
	}
	return env
}

// page runs /program.wasm with this process's file system (fsServer)
// and working directory; output and the exit status go to jsrun through
// the jsrunWrite and jsrunExit bindings, in order.
const page = `<!doctype html>
<meta charset="utf-8">
<title>jsrun</title>
<script type="module">
const exit = (code, error) => jsrunExit(JSON.stringify({ code, error }));
const enc = (u8) => { let s = ""; for (let i = 0; i < u8.length; i += 0x8000) s += String.fromCharCode(...u8.subarray(i, i + 0x8000)); return btoa(s); };
const dec = (s) => Uint8Array.from(atob(s || ""), (c) => c.charCodeAt(0));
const decoders = { 1: new TextDecoder(), 2: new TextDecoder() };
const out = (fd, buf) => { jsrunWrite(JSON.stringify({ fd, text: (decoders[fd] || decoders[2]).decode(buf, { stream: true }) })); return buf.length; };
try {
  const setup = await (await fetch("/setup.json")).json();
  const call = (req, callback, ok) => {
    fetch("/fs/" + setup.fsKey, { method: "POST", body: JSON.stringify(req) }).then((r) => r.json()).then((r) => {
      if (r.error) { const e = new Error(r.error.message); e.code = r.error.code; callback(e); } else ok(r);
    }, (e) => { e.code = "EIO"; callback(e); });
  };
  const done = (callback) => () => callback(null);
  const stat = (s) => ({ ...s, isDirectory() { return (s.mode & 0o170000) === 0o040000; } });
  globalThis.fs = {
    constants: { O_WRONLY: 1, O_RDWR: 2, O_CREAT: 0o100, O_TRUNC: 0o1000, O_APPEND: 0o2000, O_EXCL: 0o200, O_DIRECTORY: 0o200000 },
    writeSync: out,
    write(fd, buf, offset, length, position, callback) {
      const b = buf.subarray(offset, offset + length);
      if (fd === 1 || fd === 2) { callback(null, out(fd, b)); return; }
      call({ op: "write", fd, data: enc(b), pos: position }, callback, (r) => callback(null, r.n || 0));
    },
    read(fd, buffer, offset, length, position, callback) {
      call({ op: "read", fd, n: length, pos: position }, callback, (r) => { const d = dec(r.data); buffer.set(d, offset); callback(null, d.length); });
    },
    open(path, flags, mode, callback) { call({ op: "open", path, flags, mode }, callback, (r) => callback(null, r.fd)); },
    close(fd, callback) { call({ op: "close", fd }, callback, done(callback)); },
    fstat(fd, callback) { call({ op: "fstat", fd }, callback, (r) => callback(null, stat(r.stat))); },
    stat(path, callback) { call({ op: "stat", path }, callback, (r) => callback(null, stat(r.stat))); },
    lstat(path, callback) { call({ op: "lstat", path }, callback, (r) => callback(null, stat(r.stat))); },
    readdir(path, callback) { call({ op: "readdir", path }, callback, (r) => callback(null, r.names || [])); },
    readlink(path, callback) { call({ op: "readlink", path }, callback, (r) => callback(null, r.target)); },
    mkdir(path, mode, callback) { call({ op: "mkdir", path, mode }, callback, done(callback)); },
    unlink(path, callback) { call({ op: "unlink", path }, callback, done(callback)); },
    rmdir(path, callback) { call({ op: "rmdir", path }, callback, done(callback)); },
    rename(path, path2, callback) { call({ op: "rename", path, path2 }, callback, done(callback)); },
    truncate(path, n, callback) { call({ op: "truncate", path, n }, callback, done(callback)); },
    ftruncate(fd, n, callback) { call({ op: "ftruncate", fd, n }, callback, done(callback)); },
    fsync(fd, callback) { call({ op: "fsync", fd }, callback, done(callback)); },
    chmod(path, mode, callback) { call({ op: "chmod", path, mode }, callback, done(callback)); },
    fchmod(fd, mode, callback) { call({ op: "fchmod", fd, mode }, callback, done(callback)); },
    chown(path, uid, gid, callback) { call({ op: "chown", path, uid, gid }, callback, done(callback)); },
    fchown(fd, uid, gid, callback) { call({ op: "fchown", fd, uid, gid }, callback, done(callback)); },
    lchown(path, uid, gid, callback) { call({ op: "lchown", path, uid, gid }, callback, done(callback)); },
    utimes(path, atime, mtime, callback) { call({ op: "utimes", path, times: [atime, mtime] }, callback, done(callback)); },
    symlink(path, path2, callback) { call({ op: "symlink", path, path2 }, callback, done(callback)); },
    link(path, path2, callback) { call({ op: "link", path, path2 }, callback, done(callback)); },
  };
  const enosys = () => { const e = new Error("not implemented"); e.code = "ENOSYS"; return e; };
  globalThis.process = {
    getuid() { return -1; }, getgid() { return -1; }, geteuid() { return -1; }, getegid() { return -1; },
    getgroups() { throw enosys(); }, pid: -1, ppid: -1, umask() { throw enosys(); },
    cwd() { return setup.cwd; }, chdir() { throw enosys(); },
  };
  await new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = "/wasm_exec.js";
    s.onload = resolve;
    s.onerror = () => reject(new Error("cannot load wasm_exec.js"));
    document.head.appendChild(s);
  });
  const go = new Go();
  go.argv = setup.argv;
  go.env = setup.env;
  go.exit = (code) => exit(code, "");
  const { instance } = await WebAssembly.instantiateStreaming(fetch("/program.wasm"), go.importObject);
  await go.run(instance);
} catch (e) {
  exit(2, "the program crashed: " + (e && e.stack || e));
}
</script>
`
