// common.js: what the organizer, join, dashboard and pool pages share —
// building elements, calling the server's JSON API with the session's
// CSRF token, and saying things in words.

// $ is document.getElementById.
export const $ = (id) => document.getElementById(id);

// el builds an element: el("a", {href: "/x", className: "c"}, "text", child…).
// Attributes with a dash (aria-*, data-*) are set as attributes, the rest
// as properties; null and false children are skipped.
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.includes("-") || k === "role" || k === "for") e.setAttribute(k, v === true ? "" : String(v));
    else e[k] = v;
  }
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

// lowerKeys copies a JSON value with every object key's leading capitals
// lowered ("RTTMicros" → "rttMicros", "Seq" → "seq"), so the pages read
// the server's views the same whether its types carry json tags or not.
export function lowerKeys(v) {
  if (Array.isArray(v)) return v.map(lowerKeys);
  if (v === null || typeof v !== "object") return v;
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    const m = /^([A-Z]+)(?=[A-Z][a-z]|$)|^[A-Z]/.exec(k);
    out[m ? k.slice(0, m[0].length).toLowerCase() + k.slice(m[0].length) : k] = lowerKeys(x);
  }
  return out;
}

// ApiError is a refusal of the server: code is its short code (job-full,
// …) when it gave one, status the HTTP status.
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

// errorOf turns a failed response into an ApiError with the server's words.
export async function errorOf(resp) {
  const text = (await resp.text()).trim();
  let code = "", message = text;
  try {
    const j = JSON.parse(text);
    code = j.code || "";
    message = j.message || j.error || text;
  } catch { /* plain text */ }
  return new ApiError(resp.status, code, message || `${resp.status} ${resp.statusText}`);
}

let csrf = null;

// session asks the server who this page is: {organizer, csrf}.
export async function session() {
  const resp = await fetch("/api/session", { credentials: "same-origin" });
  if (!resp.ok) return { organizer: false, csrf: "" };
  const s = await resp.json();
  csrf = s.csrf || "";
  return s;
}

// api calls path; a body that is FormData goes as multipart, anything else
// as JSON. State-changing calls carry the session's CSRF token. It
// resolves to the parsed JSON answer (null for 204) or rejects with an
// ApiError.
export async function api(path, { method = "GET", body } = {}) {
  const headers = {};
  if (method !== "GET" && method !== "HEAD") {
    if (csrf === null) await session();
    if (csrf) headers["X-CSRF-Token"] = csrf;
  }
  let payload = body;
  if (body !== undefined && !(body instanceof FormData)) {
    headers["Content-Type"] = "application/json";
    payload = JSON.stringify(body);
  }
  const resp = await fetch(path, { method, headers, body: payload, credentials: "same-origin" });
  if (!resp.ok) throw await errorOf(resp);
  if (resp.status === 204) return null;
  const ct = resp.headers.get("Content-Type") || "";
  return ct.includes("json") ? lowerKeys(await resp.json()) : resp.text();
}

// bytes says n bytes the short way (1.5 kB, 2.0 MB).
export function bytes(n) {
  if (!Number.isFinite(n) || n <= 0) return "0 B";
  const units = ["B", "kB", "MB", "GB", "TB"];
  let i = 0;
  while (n >= 1000 && i < units.length - 1) { n /= 1000; i++; }
  return (i ? n.toFixed(1) : String(Math.round(n))) + " " + units[i];
}

// micros says a duration of us microseconds (850 µs, 12.3 ms, 4.20 s).
export function micros(us) {
  if (!Number.isFinite(us)) return "–";
  if (us < 1000) return Math.round(us) + " µs";
  if (us < 1e6) return (us / 1000).toFixed(us < 1e4 ? 2 : 1) + " ms";
  return (us / 1e6).toFixed(2) + " s";
}

// clock says a unix millisecond time as the local time of day.
export function clock(ms) {
  if (!ms) return "–";
  return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

// joined says how many of a job's ranks are present: "3 of 4 joined" (or
// "… up to 6" for a job that may grow).
export function joined(present, size, max) {
  let s = `${present || 0} of ${size} joined`;
  if (max && max > size) s += ` (up to ${max})`;
  return s;
}

// programName is a job's program in words: its example's name, or
// "uploaded program" for /api/jobs/ID/rank.wasm.
export function programName(info) {
  if (!info) return "–";
  if (info.example) return info.example;
  const p = info.program || "";
  const m = /^\/wasm\/([A-Za-z0-9_-]+)\.wasm$/.exec(p);
  return m ? m[1] : p ? "uploaded program" : "–";
}

// argList is a job's args as text, whether the server sends a list or a string.
export const argList = (a) => (Array.isArray(a) ? a.join(" ") : a || "");

// refusals says in words what a refusal code means for someone who opened
// an invite link.
export const refusals = {
  "job-full": "The job is full: every seat is taken, so this tab cannot be one of its ranks. Ask the organizer for a larger job or a new invite.",
  "job-ended": "The job has ended: it takes no more ranks.",
  "job-failed": "The job failed before it formed: it takes no more ranks.",
  "expired": "The invite link has expired: the job's time limit has passed.",
  "expired-token": "The seat's token has expired: the job's time limit has passed.",
  "unknown-invite": "This invite link does not name a job on this server. Check the link, or ask the organizer for a new one.",
  "not-formed": "The job has not formed yet: a late rank joins once the job's first ranks are all present.",
  "bad-token": "The seat's token is not valid for this server and job.",
  "declared-failed": "The job declared this rank failed: it cannot take part again.",
};

// refusalCode is the refusal code at the start of an error text ("job-full: …"), or "".
export const refusalCode = (text) => (/^([a-z-]+)(?::|$)/.exec(text || "") || [])[1] || "";
