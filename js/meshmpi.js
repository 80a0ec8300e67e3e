// meshmpi.js boots one Go WebAssembly rank (GOOS=js GOARCH=wasm) in a page.
//
//   import { startRank, signalURL } from "/js/meshmpi.js";
//   const rank = await startRank({
//     wasm: "/wasm/pi.wasm",               // the rank's program
//     signal: signalURL(location),         // ws(s)://host/ws of the signaling server
//     job: "j1", token: "…", rank: 0,      // MESHMPI_JOB, MESHMPI_TOKEN (the rank's seat token, or
//                                          // the job's open token), MESHMPI_RANK (optional)
//     args: ["-steps", "1000000"],
//     stdout: (text) => …, stderr: (text) => …,
//     onState: (state) => …,               // see below
//   });
//   const status = await rank.exited;      // the program's exit status
//
// The job reaches the Go program as the environment meshmpi.Init and
// meshmpi.Main read (MESHMPI_SIGNAL, MESHMPI_JOB, MESHMPI_TOKEN,
// MESHMPI_RANK), so a browser rank starts exactly as a native one.
//
// Go's wasm_exec.js keeps its console and runtime state in the page's
// global object, so a document runs at most one rank; the lab page gives
// each rank an iframe of its own.
//
// onState receives {phase, at, rank, size, present, left, error} objects,
// at = performance.now() milliseconds:
//   loading  fetching and compiling the .wasm
//   running  the Go program started
//   joined   the signaling server welcomed the rank (rank, size known)
//   ready    every rank of the job is present (the rank's Init returns)
//   left     a rank of the job left (left lists them)
//   exited   the program ended (status in state.status)
// The job phases come from watching the signaling messages the rank
// receives; the page never writes to that socket.

let running = false;
let tap = null; // receives every signaling message a rank's WebSocket gets

// signalURL is the signaling endpoint of the server that served loc.
export function signalURL(loc) {
  return (loc.protocol === "https:" ? "wss://" : "ws://") + loc.host + "/ws";
}

// opened holds the rank's WebSockets and RTCPeerConnections. A process
// that ends closes its sockets with it; a Go program in a page does not,
// so a program that ends without Finalize (os.Exit, a panic, a trap) would
// leave its signaling socket and links open, and the job would wait for
// it forever. The page closes them when the program ends (releaseRank).
const opened = [];

// watchSockets wraps the page's WebSocket and RTCPeerConnection once, so
// that the messages the Go program's signaling client receives are also
// handed to tap, and both are in opened.
function watchSockets() {
  const Base = globalThis.WebSocket;
  if (Base && !Base.meshmpiWatched) {
    class Watched extends Base {
      constructor(url, protocols) {
        super(url, protocols);
        opened.push(this);
        this.addEventListener("message", (ev) => {
          if (tap && typeof ev.data === "string") {
            try { tap(JSON.parse(ev.data)); } catch { /* not ours to judge */ }
          }
        });
      }
    }
    Watched.meshmpiWatched = true;
    globalThis.WebSocket = Watched;
  }
  const PC = globalThis.RTCPeerConnection;
  if (typeof PC === "function" && !PC.meshmpiWatched) {
    class WatchedPC extends PC {
      constructor(...args) {
        super(...args);
        opened.push(this);
      }
    }
    WatchedPC.meshmpiWatched = true;
    globalThis.RTCPeerConnection = WatchedPC;
  }
}

// releaseRank closes the rank's signaling socket and peer connections,
// as the end of a process would: the server and the other ranks see it
// gone. The page calls it when the program ended; a page may call it
// earlier to cut a running rank off (its operations then fail).
export function releaseRank() {
  for (const c of opened.splice(0)) {
    try { c.close(); } catch { /* closed already */ }
  }
}

// consoleQueue keeps the rank's newest output lines (at most 512, each
// cut to 1 KiB) for the Go side, which drains them through
// globalThis.meshmpiConsole.take() into the job's telemetry when it is
// on: one string, a line each, "o" or "e" (standard output or error)
// then the text. flush() ends the unfinished lines.
function consoleQueue() {
  const max = 512, part = { o: "", e: "" };
  let q = [];
  const add = (s, text) => {
    if (q.length >= max) q.shift();
    q.push(s + (text.length > 1024 ? text.slice(0, 1024) : text));
  };
  const queue = {
    write(stream, text) {
      const s = stream === "out" ? "o" : "e";
      const parts = (part[s] + text).split("\n");
      part[s] = parts.pop().slice(0, 4096);
      for (const l of parts) add(s, l.endsWith("\r") ? l.slice(0, -1) : l);
    },
    take() { const t = q.join("\n"); q = []; return t; },
    flush() {
      for (const s of ["o", "e"]) if (part[s]) { add(s, part[s]); part[s] = ""; }
    },
  };
  globalThis.meshmpiConsole = queue;
  return queue;
}

// loadWasmExec loads the Go toolchain's wasm_exec.js (which defines
// globalThis.Go) once.
async function loadWasmExec(url) {
  if (typeof globalThis.Go === "function") return;
  await new Promise((resolve, reject) => {
    const s = document.createElement("script");
    s.src = url;
    s.onload = resolve;
    s.onerror = () => reject(new Error("cannot load " + url));
    document.head.appendChild(s);
  });
  if (typeof globalThis.Go !== "function") throw new Error(url + " did not define Go");
}

// startRank fetches, compiles and starts a rank; it resolves once the Go
// program runs, with {exited: Promise<number>, state}.
export async function startRank(opts) {
  if (running) throw new Error("meshmpi: this document already runs a rank");
  running = true;
  const stdout = opts.stdout || ((t) => console.log(t));
  const stderr = opts.stderr || ((t) => console.error(t));
  const state = { phase: "loading", at: performance.now(), rank: opts.rank ?? null, size: null, present: 0, left: [], status: null, error: null };
  const emit = (phase, extra) => {
    Object.assign(state, extra, { phase, at: performance.now() });
    if (opts.onState) opts.onState({ ...state, left: [...state.left] });
  };
  emit("loading");

  await loadWasmExec(opts.wasmExec || "/wasm_exec.js");
  const decoders = { 1: new TextDecoder(), 2: new TextDecoder() };
  const lines = consoleQueue();
  globalThis.fs.writeSync = (fd, buf) => {
    const text = (decoders[fd] || decoders[2]).decode(buf, { stream: true });
    (fd === 1 ? stdout : stderr)(text);
    lines.write(fd === 1 ? "out" : "err", text);
    return buf.length;
  };

  watchSockets();
  tap = (msg) => {
    const d = msg.data || {};
    switch (msg.type) {
      case "welcome": emit("joined", { rank: d.rank, size: d.size }); break;
      case "ready": emit("ready", { present: d.size }); break;
      case "left": state.left.push(d.rank); emit("left"); break;
      case "error": emit(state.phase, { error: d.code + (d.message ? ": " + d.message : "") }); break;
    }
  };

  const go = new globalThis.Go();
  go.argv = [opts.name || "rank", ...(opts.args || [])];
  const env = { ...(opts.env || {}) };
  if (opts.job) {
    env.MESHMPI_SIGNAL = opts.signal || signalURL(location);
    env.MESHMPI_JOB = opts.job;
    env.MESHMPI_TOKEN = opts.token || "";
    if (opts.rank !== undefined && opts.rank !== null && opts.rank !== "") env.MESHMPI_RANK = String(opts.rank);
  }
  go.env = env;
  let resolveExit;
  const exited = new Promise((r) => { resolveExit = r; });
  go.exit = (code) => {
    tap = null;
    releaseRank(); // after Finalize they are closed already
    emit("exited", { status: code });
    resolveExit(code);
  };

  let instance;
  try {
    const resp = await fetch(opts.wasm);
    if (!resp.ok) {
      // a program the server does not have: say so, not the wasm
      // loader's words about MIME types or magic numbers
      throw new Error(`no program at ${opts.wasm} (${resp.status}: ${(await resp.text()).trim()})`);
    }
    ({ instance } = await WebAssembly.instantiateStreaming(resp, go.importObject));
  } catch (e) {
    emit("exited", { status: -1, error: String(e) });
    stderr("meshmpi: " + e + "\n");
    resolveExit(-1);
    return { exited, state };
  }
  emit("running");
  go.run(instance).catch((e) => {
    // a trap (out of memory, a runtime bug): the program is gone
    stderr("meshmpi: " + e + "\n");
    releaseRank();
    if (state.phase !== "exited") {
      emit("exited", { status: -1, error: String(e) });
      resolveExit(-1);
    }
  });
  return { exited, state };
}
