// The run page: /run?job=J&token=T[&rank=R][&example=pi][&arg=…]…[&mic=1]
// starts one rank of job J in this page and shows its state and console.
// Without job it runs the example as an in-process world in the page.
//
// A late rank of a job that grows (meshrun --max prints such a page's
// link, with the job's late token) joins once the job formed: while the
// server refuses it as not-formed, the page loads itself again (a page
// runs one rank: Go's runtime keeps its state in the page) with
// try=1, 2, … after a doubling wait, up to maxTries, and says it waits.
// A full job (job-full) and the other refusals are said in words.
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

// not-formed refusals the page waits out (loading itself again), and
// the wait before the next try
const maxTries = 10;
const tries = Math.max(0, Math.min(maxTries, Number(q.get("try")) || 0));
const retryWait = (n) => Math.min(500 * 2 ** n, 5000);

const run = { phase: "loading", rank: null, size: null, status: null, error: null, note: null, tries, stdout: "", stderr: "", times: {}, left: [] };
window.meshmpiRun = run;

// refusal is the server's refusal code in an error ("job-full: …"), or "".
const refusal = (error) => (/^([a-z-]+)(?::|$)/.exec(error || "") || [])[1] || "";

// notes says, for a refusal code, what it means for this page.
const notes = {
  "job-full": "The job is full: it admits no more ranks. (A late rank's number is never given again, so a job that grows to M ranks takes M joins in all.)",
  "not-formed": "The job has not formed yet: a late rank joins once the job's first ranks are all present.",
  "job-ended": "The job is over: it admits no more ranks.",
  "job-failed": "The job failed before it formed: it admits no more ranks.",
  "expired-token": "The link's token has expired.",
  "bad-token": "The link's token is not valid for this server and job.",
  "declared-failed": "The job declared this rank failed: it cannot take part again.",
};

function publish() {
  $("phase").textContent = run.phase + (run.error ? " (" + run.error + ")" : "");
  $("note").textContent = run.note || "";
  $("note").hidden = !run.note;
  // a late rank's number is past the job's first ranks (size)
  $("rank").textContent = run.rank === null ? "–"
    : run.size && run.rank >= run.size ? `${run.rank} (a late rank; the job formed with ${run.size})`
    : run.size ? `${run.rank} of ${run.size}` : String(run.rank);
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
      const code = refusal(s.error);
      if (code === "not-formed" && (s.phase === "joined" || s.phase === "ready")) {
        run.error = null; // refused once, admitted since
      } else if (code) {
        run.note = notes[code] || null;
      }
      if (s.phase === "exited" && code === "not-formed" && tries < maxTries) {
        // not the end: the page tries again (tools wait for "exited")
        run.phase = "waiting";
        run.note = `The job has not formed yet: joining again in ${retryWait(tries) / 1000} s (try ${tries + 2} of ${maxTries + 1}).`;
        setTimeout(() => {
          const next = new URLSearchParams(location.search);
          next.set("try", String(tries + 1));
          location.replace(location.pathname + "?" + next);
        }, retryWait(tries));
      } else if (s.phase === "exited" && code === "not-formed") {
        run.note = `The job did not form: the server refused this rank ${maxTries + 1} times (not-formed). Load the page again to try again.`;
      }
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
