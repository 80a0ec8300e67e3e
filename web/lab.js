// The lab page: /lab[?k=4&example=pi&args=…&start=1] asks the server for a
// new job of k ranks (POST /lab/jobs, enabled by `signal serve -lab`) and
// starts its k ranks as run pages in iframes of this tab.
//
// window.meshmpiLab holds {job, k, done, ranks: [{phase, status, stdout,
// stderr, times}]} for tools; done is true once every rank exited.
const $ = (id) => document.getElementById(id);
const form = $("form");
const q = new URLSearchParams(location.search);
for (const name of ["k", "example", "args"]) {
  if (q.get(name) !== null) form.elements[name].value = q.get(name);
}

const lab = { job: null, k: 0, done: false, error: null, ranks: [] };
window.meshmpiLab = lab;
let frames = []; // the ranks' windows, by rank

function render() {
  const body = $("table").tBodies[0];
  body.replaceChildren(...lab.ranks.map((r, i) => {
    const tr = document.createElement("tr");
    for (const v of [i, r.phase + (r.error ? " (" + r.error + ")" : ""), r.status === null ? "–" : r.status]) {
      const td = document.createElement("td");
      td.textContent = String(v);
      tr.appendChild(td);
    }
    return tr;
  }));
}

addEventListener("message", (ev) => {
  if (ev.origin !== location.origin || !ev.data || ev.data.meshmpi !== "run") return;
  const i = frames.indexOf(ev.source);
  if (i < 0) return;
  lab.ranks[i] = ev.data;
  lab.done = lab.ranks.every((r) => r.phase === "exited");
  render();
});

// programs lists the examples this server has (GET /programs).
const programs = fetch("/programs").then((r) => (r.ok ? r.json() : [])).catch(() => []);
programs.then((names) => $("programs").replaceChildren(...names.map((n) => Object.assign(document.createElement("option"), { value: n }))));

async function start(k, example, args) {
  const names = await programs;
  if (!names.includes(example)) {
    throw new Error(names.length
      ? `no example named "${example}" on this server; it has ${names.join(", ")}`
      : `no example named "${example}": this server has no programs (signal serve -build-examples DIR or -wasm DIR)`);
  }
  const resp = await fetch("/lab/jobs", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ size: k }),
  });
  if (!resp.ok) throw new Error("the server refused a lab job: " + resp.status + " " + (await resp.text()).trim());
  const { job, tokens } = await resp.json(); // tokens[i] admits rank i only
  Object.assign(lab, { job, k, done: false, error: null });
  lab.ranks = Array.from({ length: k }, () => ({ phase: "loading", status: null, error: null, stdout: "", stderr: "", times: {} }));
  $("job").textContent = `job ${job}: ${k} ranks of ${example}`;
  frames = [];
  const box = $("ranks");
  box.replaceChildren();
  for (let i = 0; i < k; i++) {
    const p = new URLSearchParams({ job, token: tokens[i], rank: String(i), example });
    for (const a of args) p.append("arg", a);
    if (q.get("mic") === "1") p.set("mic", "1");
    const f = document.createElement("iframe");
    f.title = "rank " + i;
    f.src = "/run?" + p;
    box.appendChild(f);
    frames.push(f.contentWindow);
  }
  render();
}

form.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const k = Number(form.elements.k.value);
  const args = form.elements.args.value.split(/\s+/).filter(Boolean);
  start(k, form.elements.example.value, args).catch((e) => { lab.error = String(e); $("job").textContent = lab.error; });
});
if (q.get("start") === "1") form.requestSubmit();
