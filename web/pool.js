// The volunteer pool page: asks the server for a job that needs ranks
// (POST /api/pool, a long poll: 204 means none yet, ask again), and runs
// the rank it is given in an iframe of the join page, which gets the seat
// in its address's fragment; when the rank exits, the iframe goes (so the
// next job gets a fresh Go runtime) and the page waits again.
//
// window.meshmpiPool holds {phase: "waiting"|"running"|"paused"|"error",
// current, done: [{job, rank, program, status}], error} for tools.
import { $, el, api } from "/web/common.js";

const pool = { phase: "waiting", current: null, done: [], error: null };
window.meshmpiPool = pool;
let paused = false;
let frame = null;
let finish = null; // resolves when the iframe's rank exited

function now(text, error) {
  $("now").textContent = text;
  $("now").classList.toggle("error", !!error);
}

addEventListener("message", (ev) => {
  if (ev.origin !== location.origin || !frame || ev.source !== frame.contentWindow) return;
  const r = ev.data;
  if (!r || r.meshmpi !== "run") return;
  if (pool.current) pool.current.phase = r.phase;
  if (r.phase === "exited" && finish) finish(r);
});

function record(s, r) {
  pool.done.push({ job: s.job, rank: s.rank, program: s.program, status: r.status, error: r.error });
  $("done").tBodies[0].replaceChildren(...pool.done.slice().reverse().map((d) => el("tr", {},
    el("td", { className: "mono" }, d.job), el("td", { className: "mono" }, d.program),
    el("td", {}, String(d.rank)),
    el("td", { className: "num " + (d.status === 0 ? "ok" : "bad") }, d.status === null || d.status === undefined ? "–" : String(d.status)))));
}

async function runSeat(s) {
  pool.phase = "running";
  pool.current = { ...s, phase: "loading" };
  const name = (/([A-Za-z0-9_-]+)\.wasm$/.exec(s.program) || [])[1] || "a program";
  const who = s.rank >= 0 ? `rank ${s.rank}` : "a late rank";
  now(`Joined job ${s.job} as ${who}: running ${name}.`);
  $("rank-panel").hidden = false;
  const done = new Promise((resolve) => { finish = resolve; });
  const q = new URLSearchParams(location.search).get("mic") === "1" ? "?mic=1" : "";
  frame = el("iframe", { className: "rank", title: `${who} of job ${s.job}`,
    src: `/join/${encodeURIComponent(s.invite)}${q}#seat=${encodeURIComponent(JSON.stringify(s))}` });
  $("frame-box").replaceChildren(frame);
  const r = await done;
  record({ ...s, rank: r.rank ?? s.rank, program: name }, r);
  now(`Job ${s.job}: rank ${r.rank ?? s.rank} ended with exit status ${r.status}. Waiting for the next job…`);
  // the output stays readable until the next job starts
  pool.current = null;
  finish = null;
}

async function loop() {
  for (;;) {
    if (paused) {
      pool.phase = "paused";
      now("Paused: this tab takes no job until you resume.");
      await new Promise((r) => { resume = r; });
    }
    pool.phase = "waiting";
    if (!pool.done.length) now("Waiting for a job that needs ranks…");
    let s;
    try {
      s = await api("/api/pool", { method: "POST" });
      pool.error = null;
    } catch (e) {
      pool.phase = "error";
      pool.error = e.message;
      now(`The server did not answer as expected (${e.message}); asking again in 5 s.`, true);
      await new Promise((r) => setTimeout(r, 5000));
      continue;
    }
    if (!s) continue; // 204: no job yet, ask again
    if (frame) { frame.remove(); frame = null; }
    await runSeat(s); // its frame stays, readable, until the next seat
  }
}

let resume = null;
$("toggle").addEventListener("click", () => {
  paused = !paused;
  $("toggle").textContent = paused ? "Resume" : "Pause";
  $("toggle").setAttribute("aria-pressed", String(paused));
  if (!paused && resume) { resume(); resume = null; }
  if (paused && pool.phase === "waiting") now("Pausing: a job the server offers meanwhile is still run.");
});

loop();
