// The dashboard: /jobs/ID/dashboard[?key=VIEWKEY] shows one job live, fed
// by its watch websocket (GET /api/jobs/ID/watch: a {type: "view"} message
// first and after any gap, then {type: "events"} batches): the ranks
// (kind, user agent, state, exit), "k of N joined", the mesh (ranks as
// nodes, links as edges labelled with path type, RTT and bytes; d3-force
// lays it out), every rank's console (bounded scrollback, searchable), a
// zoomable Gantt timeline of the operations per rank (d3 scales, axis and
// zoom), the errors and departures, and the trace.json download.
//
// The page passes its ?key= (the viewer permission) on to the API calls.
// window.meshmpiDashboard.summary() tells tools what the page holds.
import { $, el, api, session, lowerKeys, bytes, micros, clock, joined, argList, programName } from "/web/common.js";

const q = new URLSearchParams(location.search);
const id = decodeURIComponent((/^\/jobs\/([^/]+)\/dashboard/.exec(location.pathname) || [])[1] || q.get("job") || "");
const key = q.get("key");
const withKey = (p) => (key ? p + (p.includes("?") ? "&" : "?") + "key=" + encodeURIComponent(key) : p);

const opsPerRank = 5000; // operations kept per rank
const linesPerRank = 1000; // console lines kept per rank
const shownLines = 2000; // console lines shown at once
const shownBars = 8000; // timeline bars drawn at once

// M is the job as the page knows it.
const M = {
  info: null, job: null, state: "", size: 0, max: 0, present: 0, seq: 0,
  ranks: new Map(), // rank → RankView (without console)
  links: new Map(), // "from-to" → LinkView
  ops: new Map(), // rank → [{op, comm, peer, bytes, start, end, err}] (server µs)
  consoles: new Map(), // rank → [{stream, text}]
  alerts: [], alerted: new Set(),
  t0: null, tEnd: null, connected: false, over: false, events: 0,
};
const over = new Set(["over", "failed", "ended", "expired"]);
const dirty = { ranks: true, mesh: true, consoles: true, timeline: true, summary: true };

window.meshmpiDashboard = {
  summary: () => ({
    connected: M.connected, state: M.state, size: M.size, events: M.events,
    ranks: [...M.ranks.values()].map((r) => ({ rank: r.rank, kind: r.kind, state: r.state, agent: r.agent })),
    links: [...M.links.values()],
    consoleLines: Object.fromEntries([...M.consoles].map(([r, l]) => [r, l.length])),
    ops: Object.fromEntries([...M.ops].map(([r, l]) => [r, l.length])),
    bars: document.querySelectorAll("#timeline rect.op").length,
    edges: document.querySelectorAll("#mesh .link").length,
    alerts: [...M.alerts],
  }),
};

// ---- the model ----

function alert(keyText, text) {
  if (M.alerted.has(keyText)) return;
  M.alerted.add(keyText);
  M.alerts.push(text);
  const list = $("alerts");
  list.append(el("li", {}, el("time", {}, clock(Date.now())), " ", text));
  while (list.children.length > 200) list.firstElementChild.remove();
  $("no-alerts").hidden = true;
}

function rankAlert(r) {
  const who = `Rank ${r.rank}` + (r.kind ? ` (${r.kind})` : "");
  const why = r.reason ? `: ${r.reason}` : "";
  if (r.state === "failed") alert(`failed ${r.rank}`, `${who} failed${why}.`);
  else if (r.state === "aborted") alert(`aborted ${r.rank}`, `${who} aborted the job with code ${r.code}${why}.`);
  else if (r.state === "left") alert(`left ${r.rank}`, `${who} left before the job formed${why}.`);
}

function setRank(rv) {
  if (!rv || rv.rank === undefined || !rv.state) return; // a seat nobody took yet
  const { console: tail, ...r } = rv;
  M.ranks.set(r.rank, { ...(M.ranks.get(r.rank) || {}), ...r });
  rankAlert(r);
  dirty.ranks = dirty.mesh = dirty.summary = dirty.timeline = true;
  return tail;
}

function addLine(rank, line) {
  let l = M.consoles.get(rank);
  if (!l) M.consoles.set(rank, (l = []));
  l.push({ stream: line.stream || "out", text: String(line.text ?? "") });
  if (l.length > linesPerRank) l.splice(0, l.length - linesPerRank);
  dirty.consoles = true;
}

function addOp(rank, op) {
  let l = M.ops.get(rank);
  if (!l) M.ops.set(rank, (l = []));
  l.push(op);
  if (l.length > opsPerRank) l.splice(0, l.length - opsPerRank);
  if (M.t0 === null || op.start < M.t0) M.t0 = op.start;
  if (M.tEnd === null || op.end > M.tEnd) M.tEnd = op.end;
  if (op.err) alert(`op ${rank} ${op.op} ${op.start}`, `Rank ${rank}: ${op.op}${op.comm ? " on " + op.comm : ""} failed: ${op.err}`);
  dirty.timeline = dirty.ranks = true;
}

function applyView(view, info) {
  if (info) M.info = info;
  if (M.job && view.job && view.job !== M.job) {
    // the registry restarted a job that failed while forming (a rank left
    // early) under the same invite: a new signaling job, from the start
    alert("restart " + view.job, `The job restarted as ${view.job}: a rank left before it formed, so the others joined afresh.`);
    M.ops.clear();
    M.t0 = M.tEnd = null;
    mesh.nodes.clear();
    mesh.shape = "";
  }
  M.job = view.job || M.job;
  M.state = view.state || M.state;
  M.size = view.size || M.size;
  M.max = view.max || M.max;
  M.present = view.present ?? M.present;
  M.seq = view.seq || 0;
  M.ranks.clear();
  M.consoles.clear();
  for (const rv of view.ranks || []) {
    const tail = setRank(rv);
    for (const line of tail || []) addLine(rv.rank, line);
  }
  M.links.clear();
  for (const l of view.links || []) M.links.set(`${l.from}-${l.to}`, l);
  if (over.has(M.state)) M.over = true;
  Object.keys(dirty).forEach((k) => { dirty[k] = true; });
}

function applyEvent(e) {
  M.events++;
  // events the view already holds (a server that replays its ring after
  // the view): only their operations are new to the page
  const old = e.seq && e.seq <= M.seq;
  switch (e.kind) {
    case "op":
      if (e.op) addOp(e.rank, e.op);
      break;
    case "rank":
      if (!old) setRank(e.rankView);
      break;
    case "link":
      if (!old && e.link) {
        M.links.set(`${e.link.from}-${e.link.to}`, e.link);
        dirty.mesh = true;
      }
      break;
    case "console":
      if (!old && e.console) addLine(e.rank, e.console);
      break;
    case "job":
      if (!old && e.state) {
        M.state = e.state;
        if (e.state === "failed") alert("job failed", "The job failed.");
        if (e.state === "ended") alert("job ended", "The job was ended by its organizer or its time limit.");
        if (over.has(e.state)) M.over = true;
        dirty.summary = dirty.ranks = true;
      }
      break;
    case "gap":
      // the server's ring dropped events this page had not seen: a
      // {type: "view"} message follows
      break;
  }
  if (e.seq && e.seq > M.seq) M.seq = e.seq;
}

// ---- rendering ----

let renderTimer = null;
function schedule() {
  if (renderTimer === null) renderTimer = setTimeout(render, 120);
}

function render() {
  renderTimer = null;
  if (dirty.summary) renderSummary();
  if (dirty.ranks) renderRanks();
  if (dirty.mesh) renderMesh();
  if (dirty.consoles) renderConsoles();
  if (dirty.timeline) renderTimeline();
  Object.keys(dirty).forEach((k) => { dirty[k] = false; });
}

// joinedCount is the ranks that joined (a rank that left before the job
// formed gave its seat back).
function joinedCount() {
  if (!M.ranks.size) return M.present || 0;
  return [...M.ranks.values()].filter((r) => r.state !== "left").length;
}

function renderSummary() {
  const info = M.info || {};
  $("title").textContent = `Job ${id}` + (M.info ? ` · ${programName(info)}` : "");
  document.title = `Job ${id} · dashboard · meshmpi`;
  $("state").replaceChildren(el("span", { className: "pill state-" + (M.state || "forming") }, M.state || "forming"));
  $("joined").textContent = joined(joinedCount(), M.size || info.size || 0, M.max || info.max);
  $("program").textContent = programName(M.info) + (info.args && argList(info.args) ? " " + argList(info.args) : "");
  $("deadline").textContent = info.deadline ? "ends " + clock(info.deadline) : "–";
  $("trace").href = withKey(info.trace || `/api/jobs/${encodeURIComponent(id)}/trace.json`);
  $("trace").setAttribute("download", `trace-${id}.json`);
  if (info.invite) {
    $("invite-line").hidden = false;
    $("invite").href = info.invite;
    $("invite").textContent = info.invite;
  }
}

function exitText(r) {
  switch (r.state) {
    case "finalized": return "finished";
    case "failed": return "failed" + (r.reason ? ": " + r.reason : "");
    case "aborted": return `aborted, code ${r.code}` + (r.reason ? ": " + r.reason : "");
    case "left": return "left" + (r.reason ? ": " + r.reason : "");
    default: return "–";
  }
}

function renderRanks() {
  const rows = [...M.ranks.values()].sort((a, b) => a.rank - b.rank).map((r) => el("tr",
    { className: ["failed", "aborted"].includes(r.state) ? "alert" : "" },
    el("th", { scope: "row" }, String(r.rank)),
    el("td", {}, r.kind || "–"),
    el("td", {}, el("span", { className: "pill state-" + r.state }, r.state || "–")),
    el("td", { className: ["failed", "aborted"].includes(r.state) ? "bad" : "" }, exitText(r)),
    el("td", { className: "num" }, String((M.ops.get(r.rank) || []).length)),
    el("td", { className: "mono agent" }, r.agent || "–")));
  $("ranks").tBodies[0].replaceChildren(...(rows.length ? rows : [el("tr", {}, el("td", { colSpan: 6, className: "muted" }, "No rank has joined yet."))]));
  // the console's rank choices
  const sel = $("console-rank");
  const want = ["all", ...[...M.ranks.keys()].sort((a, b) => a - b).map(String)];
  if ([...sel.options].map((o) => o.value).join() !== want.join()) {
    const cur = sel.value;
    sel.replaceChildren(...want.map((v) => el("option", { value: v }, v === "all" ? "All ranks" : "Rank " + v)));
    sel.value = want.includes(cur) ? cur : "all";
  }
}

// ---- the mesh (d3-force) ----

const mesh = { nodes: new Map(), shape: "" };

// nodeR is the radius of a rank's circle when the mesh has n ranks.
const nodeR = (n) => (n <= 12 ? 20 : Math.max(7, Math.floor(280 / n)));

// pathOf is a link's path type: "host", or "host/srflx" when the two ends differ.
const pathOf = (l) => (!l.local && !l.remote ? "?" : l.local === l.remote || !l.remote ? l.local : !l.local ? l.remote : `${l.local}/${l.remote}`);

// edges pairs the links both ends report into one edge per pair of ranks.
function edges() {
  const by = new Map();
  for (const l of M.links.values()) {
    if (l.from === l.to) continue;
    const a = Math.min(l.from, l.to), b = Math.max(l.from, l.to);
    const k = `${a}-${b}`;
    const e = by.get(k) || { key: k, source: a, target: b, ab: null, ba: null };
    if (l.from === a) e.ab = l; else e.ba = l;
    by.set(k, e);
  }
  for (const e of by.values()) {
    const l = e.ab || e.ba;
    e.path = pathOf(e.ab || { local: e.ba.remote, remote: e.ba.local });
    const rtts = [e.ab, e.ba].filter((x) => x && x.rttMicros > 0).map((x) => x.rttMicros);
    e.rtt = rtts.length ? rtts.reduce((s, x) => s + x, 0) / rtts.length : null;
    e.bytes = e.ab && e.ba ? (e.ab.sent || 0) + (e.ba.sent || 0) : (l.sent || 0) + (l.received || 0);
    e.relay = [e.ab, e.ba].some((x) => x && (x.local === "relay" || x.remote === "relay"));
  }
  return [...by.values()];
}

function renderMesh() {
  const d3 = window.d3;
  const svg = d3.select("#mesh");
  const W = 600, H = 400;
  const ranks = [...M.ranks.values()].sort((a, b) => a.rank - b.rank);
  for (const r of ranks) {
    if (!mesh.nodes.has(r.rank)) {
      // start on a circle, so the layout is the same on every load
      const n = ranks.length, i = ranks.indexOf(r);
      mesh.nodes.set(r.rank, { rank: r.rank, x: W / 2 + 150 * Math.cos((2 * Math.PI * i) / n), y: H / 2 + 150 * Math.sin((2 * Math.PI * i) / n) });
    }
    mesh.nodes.get(r.rank).r = r;
  }
  const nodes = [...mesh.nodes.values()].filter((n) => M.ranks.has(n.rank));
  const es = edges().filter((e) => mesh.nodes.has(e.source) && mesh.nodes.has(e.target));
  const shape = nodes.map((n) => n.rank).join() + "|" + es.map((e) => e.key).join();
  if (shape !== mesh.shape) {
    mesh.shape = shape;
    const links = es.map((e) => ({ source: e.source, target: e.target }));
    // a ring (forceRadial) the charge spreads the ranks around, the
    // links pulling neighbours together
    const R = Math.min(W, H) / 2 - 50;
    const sim = d3.forceSimulation(nodes)
      .force("link", d3.forceLink(links).id((d) => d.rank).distance(R).strength(0.05))
      .force("charge", d3.forceManyBody().strength(-600))
      .force("radial", d3.forceRadial(nodes.length > 2 ? R : R / 2, W / 2, H / 2).strength(0.9))
      .force("collide", d3.forceCollide(nodeR(nodes.length) + 14))
      .stop();
    // laid out at once (no animation: a background tab gets no frames)
    for (let i = 0; i < 300; i++) sim.tick();
    for (const n of nodes) {
      n.x = Math.max(30, Math.min(W - 30, n.x));
      n.y = Math.max(30, Math.min(H - 30, n.y));
    }
  }
  const pos = (r) => mesh.nodes.get(r);
  const nr = nodeR(nodes.length);
  svg.selectAll("g.edge").data(es, (e) => e.key).join((enter) => {
    const g = enter.append("g").attr("class", "edge");
    g.append("line").attr("class", "link");
    g.append("text").attr("class", "label").attr("text-anchor", "middle");
    g.append("title");
    return g;
  }).each(function (e) {
    const g = d3.select(this);
    const a = pos(e.source), b = pos(e.target);
    g.select("line").attr("x1", a.x).attr("y1", a.y).attr("x2", b.x).attr("y2", b.y).classed("relay", e.relay);
    const label = [e.path, e.rtt !== null ? micros(e.rtt) : null, bytes(e.bytes)].filter(Boolean).join(" · ");
    // a third of the way from the lower rank: labels of edges that cross
    // in the middle stay apart
    // (with many ranks the labels would cover the graph: the edge's
    // tooltip and the table below say it then)
    g.select("text").attr("x", a.x + (b.x - a.x) / 3).attr("y", a.y + (b.y - a.y) / 3 - 4).text(nodes.length <= 12 ? label : "");
    g.select("title").text(`ranks ${e.source} and ${e.target}: path ${e.path}` + (e.rtt !== null ? `, RTT ${micros(e.rtt)}` : "") + `, ${bytes(e.bytes)} moved`);
  });
  svg.selectAll("g.node").data(nodes, (n) => n.rank).join((enter) => {
    const g = enter.append("g");
    g.append("circle");
    g.append("text").attr("class", "rank").attr("text-anchor", "middle").attr("dy", "0.35em").style("font-weight", 700);
    g.append("text").attr("class", "kind").attr("text-anchor", "middle").attr("dy", "34");
    g.append("title");
    return g;
  }).attr("class", (n) => "node " + (n.r.state || "")).attr("transform", (n) => `translate(${n.x},${n.y})`).each(function (n) {
    const g = d3.select(this);
    g.select("circle").attr("r", nr);
    g.select("text.kind").attr("dy", nr + 14).style("display", nodes.length <= 12 ? null : "none");
    g.select("text.rank").text(n.rank);
    g.select("text.kind").text(n.r.kind || "");
    g.select("title").text(`rank ${n.rank}: ${n.r.kind || "?"}, ${n.r.state || "?"}`);
  });
  svg.selectAll("g.node").raise();
  $("mesh-desc").textContent = nodes.length
    ? `${nodes.length} ranks, ${es.length} links: ` + es.map((e) => `${e.source}–${e.target} ${e.path}`).join(", ")
    : "No ranks yet.";
  // the table of links
  const rows = [...M.links.values()].sort((a, b) => a.from - b.from || a.to - b.to).map((l) => el("tr", {},
    el("td", {}, String(l.from)), el("td", {}, String(l.to)), el("td", {}, pathOf(l)),
    el("td", { className: "num" }, l.rttMicros > 0 ? micros(l.rttMicros) : "–"),
    el("td", { className: "num" }, bytes(l.sent)), el("td", { className: "num" }, bytes(l.received))));
  $("links").tBodies[0].replaceChildren(...rows);
}

// ---- the consoles ----

function renderConsoles() {
  const pre = $("console");
  const atEnd = pre.scrollTop + pre.clientHeight >= pre.scrollHeight - 8;
  const which = $("console-rank").value;
  const needle = $("console-search").value.trim().toLowerCase();
  const errOnly = $("console-err").checked;
  const lines = [];
  let total = 0;
  const ranks = which === "all" ? [...M.consoles.keys()].sort((a, b) => a - b) : [Number(which)];
  for (const r of ranks) {
    for (const l of M.consoles.get(r) || []) {
      total++;
      if (errOnly && l.stream !== "err") continue;
      if (needle && !l.text.toLowerCase().includes(needle)) continue;
      lines.push([r, l]);
    }
  }
  const shown = lines.slice(-shownLines);
  const frag = document.createDocumentFragment();
  for (const [r, l] of shown) {
    const line = el("span", { className: l.stream === "err" ? "err line" : "line", "data-rank": r }, el("span", { className: "tag" }, `[${r}] `));
    if (needle) {
      const low = l.text.toLowerCase();
      let at = 0;
      for (let i = low.indexOf(needle); i >= 0; i = low.indexOf(needle, at)) {
        line.append(l.text.slice(at, i), el("mark", {}, l.text.slice(i, i + needle.length)));
        at = i + needle.length;
      }
      line.append(l.text.slice(at));
    } else {
      line.append(l.text);
    }
    line.append("\n");
    frag.append(line);
  }
  pre.replaceChildren(frag);
  $("console-count").textContent = needle || errOnly
    ? `${lines.length} of ${total} lines match` + (lines.length > shownLines ? ` (the last ${shownLines} shown)` : "")
    : `${total} lines` + (total > shownLines ? ` (the last ${shownLines} shown)` : "");
  if (atEnd) pre.scrollTop = pre.scrollHeight;
}
for (const id of ["console-rank", "console-search", "console-err"]) {
  $(id).addEventListener("input", () => { dirty.consoles = true; schedule(); });
}

// ---- the timeline (d3 scale, axis, zoom) ----

const tl = { zoom: null, transform: null, width: 0 };
const lane = 24, top = 8, axisH = 26, left = 54;

function timelineSize() {
  const w = Math.max(300, Math.round($("timeline").getBoundingClientRect().width) || 800);
  return w;
}

function renderTimeline() {
  const d3 = window.d3;
  const svg = d3.select("#timeline");
  const ranks = [...new Set([...M.ranks.keys(), ...M.ops.keys()])].sort((a, b) => a - b);
  const W = timelineSize();
  const H = top + Math.max(1, ranks.length) * lane + axisH;
  svg.attr("viewBox", `0 0 ${W} ${H}`).attr("height", H);
  const span = M.t0 === null ? 1e6 : Math.max(1000, M.tEnd - M.t0);
  const x = d3.scaleLinear().domain([0, span]).range([left, W - 8]);
  if (!tl.zoom) {
    tl.zoom = d3.zoom().scaleExtent([1, 1e6]).on("zoom", (ev) => {
      tl.transform = ev.transform;
      dirty.timeline = true;
      schedule();
    });
    svg.call(tl.zoom).on("dblclick.zoom", null);
    svg.append("g").attr("class", "lanes");
    svg.append("g").attr("class", "bars");
    svg.append("g").attr("class", "marks");
    svg.append("g").attr("class", "axis");
    svg.append("g").attr("class", "names");
  }
  tl.zoom.extent([[left, 0], [W - 8, H]]).translateExtent([[left, 0], [W - 8, H]]);
  const t = tl.transform || d3.zoomIdentity;
  const zx = t.rescaleX(x);
  const y = (r) => top + ranks.indexOf(r) * lane;
  svg.select("g.lanes").selectAll("rect").data(ranks).join("rect")
    .attr("class", (r, i) => "lane" + (i % 2 ? " odd" : ""))
    .attr("x", left).attr("width", W - 8 - left).attr("y", (r) => y(r)).attr("height", lane);
  svg.select("g.names").selectAll("text").data(ranks).join("text")
    .attr("x", 6).attr("y", (r) => y(r) + lane / 2).attr("dy", "0.35em").text((r) => "rank " + r);
  // the bars in view, at most shownBars of them
  const [d0, d1] = zx.domain();
  const bars = [];
  for (const r of ranks) {
    for (const o of M.ops.get(r) || []) {
      const s = o.start - M.t0, e = o.end - M.t0;
      if (e < d0 || s > d1) continue;
      bars.push([r, o, s, e]);
    }
  }
  const drawn = bars.length > shownBars ? bars.slice(-shownBars) : bars;
  svg.select("g.bars").selectAll("rect.op").data(drawn).join((enter) => {
    const rect = enter.append("rect");
    rect.append("title");
    return rect;
  })
    .attr("class", ([, o]) => "op " + (o.err ? "err" : o.peer === undefined || o.peer === null || o.peer < 0 ? "coll" : "p2p"))
    .attr("x", ([, , s]) => Math.max(left, zx(s)))
    .attr("width", ([, , s, e]) => Math.max(1.5, Math.min(W - 8, zx(e)) - Math.max(left, zx(s))))
    .attr("y", ([r]) => y(r) + 3).attr("height", lane - 6)
    .select("title").text(([r, o]) => `rank ${r}: ${o.op}` + (o.comm ? ` on ${o.comm}` : "") +
      (o.peer >= 0 && o.peer !== null && o.peer !== undefined ? ` with rank ${o.peer}` : "") +
      (o.bytes ? `, ${bytes(o.bytes)}` : "") + `, ${micros(o.end - o.start)}` + (o.err ? ` — failed: ${o.err}` : ""));
  // departures: failed, aborted or left ranks, at the time they left
  const marks = [...M.ranks.values()].filter((r) => ["failed", "aborted", "left"].includes(r.state) && r.left && M.t0 !== null)
    .map((r) => [r.rank, r.left * 1000 - M.t0]).filter(([, tt]) => tt >= d0 && tt <= d1);
  svg.select("g.marks").selectAll("line").data(marks).join("line").attr("class", "departure")
    .attr("x1", ([, tt]) => zx(tt)).attr("x2", ([, tt]) => zx(tt))
    .attr("y1", ([r]) => y(r)).attr("y2", ([r]) => y(r) + lane);
  svg.select("g.axis").attr("transform", `translate(0,${H - axisH + 2})`)
    .call(d3.axisBottom(zx).ticks(Math.max(2, Math.floor((W - left) / 90))).tickFormat((v) => micros(v)));
  const n = [...M.ops.values()].reduce((s, l) => s + l.length, 0);
  $("timeline-desc").textContent = n
    ? `${n} operations on ${ranks.length} ranks over ${micros(span)}; ${drawn.length} in view.`
    : "No operations yet.";
  // the table beside it
  $("opsum").tBodies[0].replaceChildren(...ranks.map((r) => {
    const l = M.ops.get(r) || [];
    const count = new Map();
    let busy = 0, failed = 0;
    for (const o of l) {
      count.set(o.op, (count.get(o.op) || 0) + 1);
      busy += o.end - o.start;
      if (o.err) failed++;
    }
    const top3 = [...count].sort((a, b) => b[1] - a[1]).slice(0, 3).map(([k, v]) => `${k} ×${v}`).join(", ");
    return el("tr", { className: failed ? "alert" : "" }, el("th", { scope: "row" }, String(r)),
      el("td", { className: "num" }, String(l.length)), el("td", {}, top3 || "–"),
      el("td", { className: "num" }, micros(busy)), el("td", { className: "num" }, String(failed)));
  }));
}

function zoomBy(k) {
  window.d3.select("#timeline").call(tl.zoom.scaleBy, k);
}
function panBy(dx) {
  window.d3.select("#timeline").call(tl.zoom.translateBy, dx / ((tl.transform && tl.transform.k) || 1), 0);
}
$("zoom-in").addEventListener("click", () => zoomBy(2));
$("zoom-out").addEventListener("click", () => zoomBy(0.5));
$("pan-left").addEventListener("click", () => panBy(120));
$("pan-right").addEventListener("click", () => panBy(-120));
$("zoom-reset").addEventListener("click", () => window.d3.select("#timeline").call(tl.zoom.transform, window.d3.zoomIdentity));
$("timeline").addEventListener("keydown", (ev) => {
  const act = { "+": () => zoomBy(2), "=": () => zoomBy(2), "-": () => zoomBy(0.5), ArrowLeft: () => panBy(60), ArrowRight: () => panBy(-60), Home: () => $("zoom-reset").click() }[ev.key];
  if (act) {
    ev.preventDefault();
    act();
  }
});
addEventListener("resize", () => { dirty.timeline = true; schedule(); });

// ---- the connection ----

function conn(text, error) {
  $("conn").textContent = text;
  $("conn").classList.toggle("error", !!error);
}

let retry = 0;
let opened = false;

function watch() {
  const u = new URL(withKey(`/api/jobs/${encodeURIComponent(id)}/watch`), location.href);
  u.protocol = location.protocol === "https:" ? "wss:" : "ws:";
  const ws = new WebSocket(u);
  let got = false;
  ws.onmessage = (ev) => {
    let m;
    try { m = lowerKeys(JSON.parse(ev.data)); } catch { return; }
    if (!got) {
      got = true;
      retry = 0;
      M.connected = true;
      conn("Live: the dashboard follows the job.");
    }
    if (m.type === "view" && m.view) applyView(m.view, m.info);
    else if (m.type === "events") for (const e of m.events || []) applyEvent(e);
    if (M.over) conn(`The job is ${M.state}: the dashboard shows its last state.`);
    schedule();
  };
  ws.onopen = () => { opened = true; };
  ws.onclose = async () => {
    M.connected = false;
    if (!got && !opened) {
      // refused at the start: ask the plain API why, in words
      try {
        await api(withKey(`/api/jobs/${encodeURIComponent(id)}/view`));
      } catch (e) {
        conn(e.status === 404 ? `There is no job ${id} on this server (it may have ended long ago).`
          : e.status === 401 || e.status === 403 ? `This dashboard needs the organizer's login or the job's viewer link (with its key): ${e.message}`
          : `Cannot watch the job: ${e.message}`, true);
        if (e.status === 404 || e.status === 401 || e.status === 403) return;
      }
    }
    if (M.over && got) {
      conn(`The job is ${M.state}: the dashboard shows its last state.`);
      return;
    }
    retry = Math.min(retry + 1, 5);
    const wait = 1000 * 2 ** (retry - 1);
    conn(`The connection to the server was lost: trying again in ${wait / 1000} s.`, true);
    setTimeout(watch, wait);
  };
}

async function start() {
  if (!window.d3) await new Promise((r) => addEventListener("load", r, { once: true }));
  if (!window.d3) {
    conn("The page's chart library (/web/vendor/d3.min.js) did not load.", true);
    return;
  }
  if (!id) {
    conn("This page needs a job: /jobs/ID/dashboard.", true);
    return;
  }
  renderSummary();
  watch();
  // the jobs page is the organizer's: a viewer with the link has no use for it
  session().then((s) => { $("nav").hidden = !s.organizer; }).catch(() => {});
}
start();
