// The jobs page (organizer): create a job (an example of this server or an
// uploaded program; size, most ranks, ICE servers, time limit, pool,
// arguments), show its invite link with a QR code, list the server's jobs
// and the volunteers waiting in the pool, and end a job.
//
// window.meshmpiJobs holds {created, jobs, pool, error} for tools.
import { $, el, api, session, joined, argList, clock, programName } from "/web/common.js";

const state = { created: null, jobs: [], pool: null, error: null };
window.meshmpiJobs = state;
const form = $("create");

function say(id, text, error) {
  const p = $(id);
  p.textContent = text;
  p.classList.toggle("error", !!error);
}

async function loadPrograms() {
  let names = [];
  try {
    const r = await fetch("/programs");
    if (r.ok) names = await r.json();
  } catch { /* none */ }
  const sel = $("example");
  if (!names.length) {
    sel.replaceChildren(el("option", { value: "" }, "(no examples on this server: upload a program)"));
    return;
  }
  sel.replaceChildren(...names.map((n) => el("option", { value: n }, n)));
  const preferred = ["allreduce", "pi"].find((n) => names.includes(n));
  if (preferred) sel.value = preferred;
}

// invalid marks a field and says why; the form is not sent.
function invalid(field, text) {
  field.setAttribute("aria-invalid", "true");
  field.focus();
  say("create-status", text, true);
  return false;
}

function formData() {
  for (const f of form.querySelectorAll("[aria-invalid]")) f.removeAttribute("aria-invalid");
  const e = form.elements;
  const fd = new FormData();
  const rank = e.rank_wasm.files[0];
  if (rank) fd.append("rank_wasm", rank);
  else if (e.example.value) fd.append("example", e.example.value);
  else return invalid(e.rank_wasm, "Choose an example or upload a rank program (.wasm).");
  if (e.wasi_wasm.files[0]) fd.append("wasi_wasm", e.wasi_wasm.files[0]);
  const size = Number(e.size.value);
  if (!Number.isInteger(size) || size < 1) return invalid(e.size, "The size is a whole number of ranks, at least 1.");
  fd.append("size", String(size));
  if (e.max.value !== "") {
    const max = Number(e.max.value);
    if (!Number.isInteger(max) || max < size) return invalid(e.max, `Most ranks is a whole number, at least the size (${size}), or empty.`);
    fd.append("max", String(max));
  }
  if (e.minutes.value !== "") {
    const m = Number(e.minutes.value);
    if (!(m > 0)) return invalid(e.minutes, "The time limit is a number of minutes above 0.");
    fd.append("minutes", String(m));
  }
  if (e.ice.value.trim()) fd.append("ice", e.ice.value.trim());
  if (e.pool.checked) fd.append("pool", "on");
  if (e.args.value.trim()) fd.append("args", e.args.value.trim());
  return fd;
}

function showInvite(info) {
  $("invite-panel").hidden = false;
  $("invite-job").textContent = info.id;
  $("invite-url").value = info.invite;
  $("invite-open").href = info.invite;
  $("invite-dashboard").href = info.dashboard;
  const qr = $("qr");
  qr.src = info.qr;
  qr.alt = `QR code of the invite link for job ${info.id}`;
  $("wasi-join").hidden = !info.wasiJoin;
  $("wasi-cmd").textContent = info.wasiJoin || "";
  $("copy-status").textContent = "";
  $("invite-h").focus();
}

form.addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const fd = formData();
  if (!fd) return;
  const btn = $("create-btn");
  btn.disabled = true;
  say("create-status", "Creating the job…");
  try {
    const info = await api("/api/jobs", { method: "POST", body: fd });
    state.created = info;
    state.error = null;
    say("create-status", `Job ${info.id} created: ${programName(info)}, ${joined(info.present, info.size, info.max)}.`);
    showInvite(info);
    refresh();
  } catch (e) {
    state.error = e.message;
    if (e.status === 401 || e.status === 403) say("create-status", `The server refused: ${e.message} (log in again?)`, true);
    else say("create-status", "The job was not created: " + e.message, true);
  } finally {
    btn.disabled = false;
  }
});

$("copy").addEventListener("click", async () => {
  const input = $("invite-url");
  try {
    await navigator.clipboard.writeText(input.value);
  } catch {
    input.select();
    document.execCommand("copy"); // browsers without the async clipboard (plain http off localhost)
  }
  $("copy-status").textContent = "Invite link copied.";
});

$("logout").addEventListener("click", async () => {
  try {
    await api("/logout", { method: "POST" });
  } catch { /* logged out either way */ }
  location.href = "/login";
});

// endButton ends a job on a second press (the first asks to confirm).
function endButton(job) {
  const b = el("button", { type: "button", className: "danger", "aria-label": `End job ${job.id}` }, "End");
  let armed = null;
  b.addEventListener("click", async () => {
    if (!armed) {
      b.textContent = "Confirm end";
      b.setAttribute("aria-label", `Confirm: end job ${job.id}`);
      armed = setTimeout(() => { armed = null; b.textContent = "End"; b.setAttribute("aria-label", `End job ${job.id}`); }, 6000);
      return;
    }
    clearTimeout(armed);
    b.disabled = true;
    try {
      await api(`/api/jobs/${encodeURIComponent(job.id)}/end`, { method: "POST" });
      say("list-status", `Job ${job.id} ended.`);
    } catch (e) {
      say("list-status", `Job ${job.id} was not ended: ${e.message}`, true);
    }
    refresh();
  });
  return b;
}

const over = new Set(["over", "failed", "ended", "expired"]);

function render() {
  const rows = [...state.jobs].sort((a, b) => (b.created || 0) - (a.created || 0)).map((j) => {
    const st = j.state || "forming";
    return el("tr", {},
      el("td", { className: "mono" }, j.id),
      el("td", {}, programName(j), j.args && argList(j.args) ? el("span", { className: "muted mono" }, " " + argList(j.args)) : null),
      el("td", {}, el("span", { className: "pill state-" + st }, st),
        j.reason ? el("div", { className: "muted" }, j.reason) : null,
        j.restarts ? el("div", { className: "muted" }, `restarted ${j.restarts}×: a rank left before it formed`) : null),
      el("td", {}, joined(j.present, j.size, j.max)),
      el("td", {}, clock(j.deadline)),
      el("td", {},
        el("a", { href: j.dashboard, "aria-label": `Dashboard of job ${j.id}` }, "Dashboard"), " · ",
        el("a", { href: j.invite, target: "_blank", rel: "noopener", "aria-label": `Invite link of job ${j.id}` }, "Invite")),
      el("td", {}, over.has(st) ? null : endButton(j)));
  });
  const body = $("jobs").tBodies[0];
  // keep a row's focused button: only replace rows when something changed
  const sig = JSON.stringify(state.jobs.map((j) => [j.id, j.state, j.present, j.deadline, j.reason, j.restarts]));
  if (body.dataset.sig === sig) return;
  if (body.contains(document.activeElement) && document.activeElement.textContent === "Confirm end") return;
  body.dataset.sig = sig;
  body.replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colSpan: 7, className: "muted" }, "No jobs yet: create one above."))]));
}

let timer = null;
async function refresh() {
  clearTimeout(timer);
  try {
    const r = await api("/api/jobs");
    state.jobs = r.jobs || [];
    state.pool = r.pool ? r.pool.waiting : 0;
    $("pool-count").textContent = `Volunteers waiting in the pool: ${state.pool}`;
    render();
    if ($("list-status").classList.contains("error")) say("list-status", "");
  } catch (e) {
    if (e.status === 401 || e.status === 403) {
      location.replace("/login?next=/jobs");
      return;
    }
    say("list-status", "Cannot read the jobs: " + e.message, true);
  }
  timer = setTimeout(refresh, 2000);
}

session().then((s) => {
  if (!s.organizer) {
    location.replace("/login?next=/jobs");
    return;
  }
  loadPrograms();
  refresh();
});
