// The run page: /run?job=J&token=T[&rank=R][&example=pi][&arg=…]…[&mic=1]
// starts one rank of job J in this page and shows its state and console.
// Without job it runs the example as an in-process world in the page.
//
// window.meshmpiRun holds the rank's state for tools (tests, the lab
// page): phase, rank, size, status, stdout, stderr and times (the
// performance.now() of each phase, so times.ready is the time from page
// load to the rank being ready). A page inside a frame also posts every
// change to its parent as {meshmpi: "run", ...}.
import { startRank, signalURL } from "/js/meshmpi.js";

const q = new URLSearchParams(location.search);
const example = q.get("example") || "pi";
const $ = (id) => document.getElementById(id);
const out = $("console");

const run = { phase: "loading", rank: null, size: null, status: null, error: null, stdout: "", stderr: "", times: {}, left: [] };
window.meshmpiRun = run;

function publish() {
  $("phase").textContent = run.phase + (run.error ? " (" + run.error + ")" : "");
  $("rank").textContent = run.rank === null ? "–" : run.size ? `${run.rank} of ${run.size}` : String(run.rank);
  $("present").textContent = run.present ? String(run.present) : "–";
  $("left").textContent = run.left.length ? run.left.join(", ") : "none";
  if (run.status !== null) {
    $("status").textContent = String(run.status);
    $("status").className = run.status === 0 ? "ok" : "fail";
  }
  if (parent !== window) {
    parent.postMessage({ meshmpi: "run", ...run, left: [...run.left] }, location.origin);
  }
}

function write(text, cls, key) {
  run[key] += text;
  const span = document.createElement("span");
  if (cls) span.className = cls;
  span.textContent = text;
  out.appendChild(span);
  out.scrollTop = out.scrollHeight;
  publish();
}

async function main() {
  if (!/^[A-Za-z0-9_-]+$/.test(example)) throw new Error("bad example name " + JSON.stringify(example));
  const job = q.get("job");
  $("program").textContent = example + (q.getAll("arg").length ? " " + q.getAll("arg").join(" ") : "");
  $("job").textContent = job || "none (in-process world in this page)";
  if (q.get("rank") !== null) run.rank = Number(q.get("rank"));
  if (q.get("mic") === "1" && navigator.mediaDevices) {
    // holding the microphone makes the browser publish plain host
    // candidates instead of mDNS names (needed on a loopback-only host)
    try { (await navigator.mediaDevices.getUserMedia({ audio: true })).getTracks().forEach((t) => t.stop()); } catch { /* best effort */ }
  }
  const rank = await startRank({
    name: example,
    wasm: "/wasm/" + example + ".wasm",
    signal: signalURL(location),
    job, token: q.get("token"), rank: q.get("rank"),
    args: q.getAll("arg"),
    stdout: (t) => write(t, "", "stdout"),
    stderr: (t) => write(t, "err", "stderr"),
    onState: (s) => {
      Object.assign(run, { phase: s.phase, size: s.size, present: s.present, left: s.left, status: s.status, error: s.error });
      if (s.rank !== null && s.rank !== undefined) run.rank = s.rank;
      run.times[s.phase] = s.at;
      publish();
    },
  });
  await rank.exited;
}

main().catch((e) => {
  run.phase = "exited";
  run.status = -1;
  run.error = String(e);
  write("run page: " + e + "\n", "err", "stderr");
});
