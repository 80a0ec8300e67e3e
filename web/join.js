// The join page: /join/INVITE makes this tab one rank of the invite's job.
// It asks the server for a seat (POST /api/join/INVITE: a seat token for
// one rank), runs the job's program as that rank in this page (startRank
// of /js/meshmpi.js, as the run page does), and shows the rank, its
// console, the job's progress (GET the answer's status URL) and, at the
// end, the exit status. A tab that cannot join says why in words.
//
// The volunteer pool page hands a seat it already holds to its iframe in
// the address's fragment (#seat=<JSON of the join answer>), so no second
// seat is taken.
//
// window.meshmpiRun holds the rank's state like the run page's (phase,
// rank, size, status, error, note, stdout, stderr, times) plus job and
// progress; a page in a frame posts every change to its parent as
// {meshmpi: "run", ...}. ?mic=1 holds the microphone once first (a
// loopback-only host needs the host candidates that brings).
import { startRank, signalURL, releaseRank } from "/js/meshmpi.js";
import { $, el, api, refusals, refusalCode, ApiError } from "/web/common.js";

const q = new URLSearchParams(location.search);
const invite = decodeURIComponent(location.pathname.replace(/^\/join\//, "").replace(/\/$/, ""));
const out = $("console");
const maxConsole = 200_000; // characters the page keeps of the rank's output
// A job that fails while it forms (a rank left early: a tab closed or
// reloaded) is started afresh by the server under the same invite; the
// page then loads itself again (a document runs one Go rank) for a seat
// of the new one, up to maxTries times.
const maxTries = 3;
const tries = Math.max(0, Math.min(maxTries, Number(q.get("try")) || 0));
let stopping = false; // the job ended under the running rank
let pooled = false; // the seat came from the pool page, which asks again itself

// in the pool page's frame, the pool page's header is enough
if (parent !== window) document.body.classList.add("framed");

const run = { phase: "joining", job: null, rank: null, size: null, status: null, error: null, note: null, stdout: "", stderr: "", times: {}, left: [], progress: null };
window.meshmpiRun = run;

function publish() {
  $("phase").textContent = run.phase + (run.error ? " (" + run.error + ")" : "");
  $("note").textContent = run.note || "";
  $("note").hidden = !run.note;
  $("rank").textContent = run.rank === null ? "–"
    : run.size && run.rank >= run.size ? `${run.rank} (a late rank; the job formed with ${run.size})`
    : run.size ? `${run.rank} of ${run.size}` : String(run.rank);
  if (run.status !== null) {
    $("status").textContent = run.status === 0 ? "0 (success)" : `${run.status} (failed)`;
    $("status").className = run.status === 0 ? "ok" : "bad";
  }
  if (run.phase === "exited") {
    $("title").textContent = run.status === 0 ? `Rank ${run.rank ?? "–"}: finished` : "This tab's rank did not finish";
  } else if (run.rank !== null) {
    $("title").textContent = `Rank ${run.rank} of job ${run.job}`;
  }
  if (parent !== window) {
    parent.postMessage({ meshmpi: "run", ...run, left: [...run.left] }, location.origin);
  }
}

function write(text, cls, key) {
  run[key] += text;
  if (run[key].length > maxConsole) run[key] = run[key].slice(-maxConsole);
  const span = document.createElement("span");
  if (cls) span.className = cls;
  span.textContent = text;
  out.appendChild(span);
  while (out.childNodes.length > 5000) out.firstChild.remove();
  out.scrollTop = out.scrollHeight;
  publish();
}

// cannot ends the page's try: it says why in words.
function cannot(code, words) {
  run.phase = "exited";
  run.status = run.status ?? -1;
  run.error = code || null;
  run.note = words;
  $("title").textContent = "This tab cannot join the job";
  publish();
}

// seat is the join answer: from the fragment (the pool page) or a new one.
async function seat() {
  const h = new URLSearchParams(location.hash.slice(1));
  if (h.get("seat")) {
    pooled = true;
    const s = JSON.parse(h.get("seat"));
    history.replaceState(null, "", location.pathname + location.search); // a reload takes a seat of its own
    return s;
  }
  return api(`/api/join/${encodeURIComponent(invite)}`, { method: "POST" });
}

const over = new Set(["over", "failed", "ended"]);
let statusURL = null;
let statusTimer = null;

async function progress() {
  clearTimeout(statusTimer);
  if (!statusURL) return;
  try {
    const s = await api(statusURL);
    run.progress = s;
    const ranks = s.ranks || [];
    const finished = ranks.filter((r) => r.state === "finalized").length;
    const failed = ranks.filter((r) => ["failed", "aborted"].includes(r.state)).length;
    $("progress").textContent = over.has(s.state)
      ? `The job ${s.state === "over" ? "is over" : s.state === "ended" ? "was ended" : "failed"}: ${finished} of ${ranks.length || s.size} ranks finished` +
        (failed ? `, ${failed} failed.` : ".")
      : `The job is ${s.state}: ${s.present} of ${s.size} ranks present` + (s.max > s.size ? ` (it takes up to ${s.max}).` : ".");
    const me = run.rank;
    $("ranks").tBodies[0].replaceChildren(...(s.ranks || []).map((r) => el("tr", { className: ["failed", "aborted"].includes(r.state) ? "alert" : "" },
      el("td", {}, String(r.rank), r.rank === me ? " (this tab)" : ""),
      el("td", {}, el("span", { className: "pill state-" + r.state }, r.state)),
      el("td", { className: "num" }, r.code ? String(r.code) : ""))));
    publish();
    if (run.phase === "exited" && over.has(s.state)) return; // the last word
  } catch (e) {
    if (run.phase === "exited") return;
  }
  statusTimer = setTimeout(progress, run.phase === "exited" ? 3000 : 1000);
}

async function main() {
  if (!invite) return cannot("unknown-invite", "This page needs an invite link: /join/INVITE.");
  if (typeof RTCPeerConnection !== "function") {
    return cannot("no-webrtc", "This browser has no WebRTC (RTCPeerConnection), which a rank needs to talk to the others. Open the invite link in a current Firefox, Chrome, Edge or Safari, with WebRTC enabled.");
  }
  if (typeof WebAssembly !== "object") {
    return cannot("no-wasm", "This browser cannot run WebAssembly, which the job's program is. Open the invite link in a current browser.");
  }
  let s;
  try {
    s = await seat();
  } catch (e) {
    const code = e instanceof ApiError ? e.code : "";
    return cannot(code, (refusals[code] || "The server did not give this tab a seat.") + (e.message ? ` (The server said: ${e.message})` : ""));
  }
  // a late rank of a job that grows gets its number at the join (rank -1 here)
  Object.assign(run, { job: s.job, rank: s.rank >= 0 ? s.rank : null, size: s.size });
  const name = (/([A-Za-z0-9_-]+)\.wasm$/.exec(s.program) || [])[1] || "rank";
  const args = Array.isArray(s.args) ? s.args : String(s.args || "").split(/\s+/).filter(Boolean);
  $("job").textContent = s.job;
  $("program").textContent = name + (args.length ? " " + args.join(" ") : "");
  statusURL = s.status || null;
  progress();
  publish();
  if (q.get("mic") === "1" && navigator.mediaDevices) {
    try { (await navigator.mediaDevices.getUserMedia({ audio: true })).getTracks().forEach((t) => t.stop()); } catch { /* best effort */ }
  }
  const signal = s.signal ? new URL(s.signal, location.href) : null;
  if (signal) signal.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const rank = await startRank({
    name,
    wasm: s.program,
    signal: signal ? signal.href : signalURL(location),
    job: s.job, token: s.token, rank: s.rank >= 0 ? s.rank : null,
    args,
    stdout: (t) => write(t, "", "stdout"),
    stderr: (t) => write(t, "err", "stderr"),
    onState: (st) => {
      Object.assign(run, { phase: st.phase, size: st.size ?? run.size, present: st.present, left: st.left, status: st.status, error: st.error });
      if (st.rank !== null && st.rank !== undefined) run.rank = st.rank;
      run.times[st.phase] = st.at;
      const code = refusalCode(st.error);
      if (code && refusals[code]) run.note = refusals[code];
      if (code === "job-ended" && st.phase !== "exited" && !stopping) {
        // the organizer ended the job (or its time limit passed) while
        // this rank runs: the rank is evicted and ends; the page lets go
        // of its connections at once too
        stopping = true;
        run.note = "The job has ended: the organizer ended it, or its time limit passed. This tab stops its rank.";
        releaseRank();
      }
      if (st.phase === "exited" && code === "job-failed" && !run.times.ready && !pooled && tries < maxTries) {
        // not the end: the page joins the restarted job (tools wait for "exited")
        run.phase = "waiting";
        run.note = `A rank left before the job started, so the job starts afresh: joining it again (try ${tries + 2} of ${maxTries + 1})…`;
        setTimeout(() => {
          const next = new URLSearchParams(location.search);
          next.set("try", String(tries + 1));
          location.replace(location.pathname + "?" + next);
        }, 1000);
      } else if (st.phase === "exited") {
        if (!run.note && st.status !== 0) run.note = `The program ended with exit status ${st.status}; its output is below.`;
        progress();
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
  write("join page: " + e + "\n", "err", "stderr");
});
